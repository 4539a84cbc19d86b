import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main(cmd, args):
    params = StdioServerParameters(command=cmd, args=args)
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            init = await s.initialize()
            tools = await s.list_tools()
            d = init.model_dump(mode="json", by_alias=True, exclude_none=True)
            out = {"serverInfo": d.get("serverInfo"), "protocolVersion": d.get("protocolVersion"),
                   "tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools]}
            print(json.dumps(out, indent=1, ensure_ascii=False))

asyncio.run(main(sys.argv[1], sys.argv[2:]))
