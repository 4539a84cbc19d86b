"""A scripted MCP client over stdio, on the official Python SDK (PyPI `mcp`).

usage: client.py SCRIPT.json -- SERVER_COMMAND [ARGS...]

The SDK starts the server with a short list of safe variables only; the
names in FOREST_CLIENT_PASS_ENV (comma-separated) are passed on as well.

SCRIPT is a JSON list of calls: {"tool": name, "args": {...}} or
{"list_tools": true}. Prints one JSON object: the server info, and per call
either the tool listing or {"is_error", "text"} (text = the first text block).
Used by forest's integration tests and bench/serve_bench.py.
"""
import asyncio
import json
import os
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client


async def main(script, cmd, args):
    env = None
    passed = [n for n in os.environ.get("FOREST_CLIENT_PASS_ENV", "").split(",") if n in os.environ]
    if passed:
        env = {**get_default_environment(), **{n: os.environ[n] for n in passed}}
    params = StdioServerParameters(command=cmd, args=args, env=env)
    out = {"calls": []}
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            init = await s.initialize()
            d = init.model_dump(mode="json", by_alias=True, exclude_none=True)
            out["serverInfo"] = d.get("serverInfo")
            out["protocolVersion"] = d.get("protocolVersion")
            for step in script:
                t0 = time.perf_counter()
                if step.get("list_tools"):
                    tools = await s.list_tools()
                    res = {"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools]}
                else:
                    r_ = await s.call_tool(step["tool"], step.get("args", {}))
                    texts = [c.text for c in r_.content if getattr(c, "type", "") == "text"]
                    res = {"is_error": bool(r_.is_error), "text": texts[0] if texts else None,
                           "blocks": [getattr(c, "type", "") for c in r_.content]}
                res["ms"] = (time.perf_counter() - t0) * 1000.0
                out["calls"].append(res)
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    argv = sys.argv[1:]
    sep = argv.index("--")
    with open(argv[0]) as f:
        script = json.load(f)
    asyncio.run(main(script, argv[sep + 1], argv[sep + 2:]))
