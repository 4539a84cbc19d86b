"""Call tools over MCP streamable HTTP with a bearer token (official `mcp` SDK).

usage: token_client.py URL TOKEN CALLS_JSON

CALLS_JSON is a list of [tool, arguments]. Prints {"results": [payload...]}
(each the tool's JSON payload, error envelopes included) as JSON, or
{"refused": "<error>"} when the server refuses the connection (e.g. 401).
"""
import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(url, token, calls):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    results = []
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                for tool, args in calls:
                    r = await s.call_tool(tool, args)
                    results.append(json.loads(r.content[0].text))
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    try:
        asyncio.run(asyncio.wait_for(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])), 60))
    except BaseException as e:  # the SDK wraps an HTTP 401 in exception groups
        print(json.dumps({"refused": repr(e)[:500]}))
