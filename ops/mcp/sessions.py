"""Several MCP clients at once over streamable HTTP (official `mcp` SDK),
each with its own bearer token and session, driven by one interleaved script.

usage: sessions.py URL TOKENS_JSON STEPS_JSON

TOKENS_JSON is a list of tokens (one client each, all connected before the
first step). STEPS_JSON is a list of [client_index, tool, arguments], run in
order. Prints {"results": [payload...]} as JSON (each
payload the tool's JSON, error envelopes included), or {"refused": "<error>"}
when the server refuses a connection.
"""
import asyncio
import contextlib
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(url, tokens, steps):
    async with contextlib.AsyncExitStack() as stack:
        clients = []
        for token in tokens:
            http = await stack.enter_async_context(create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
            streams = await stack.enter_async_context(streamable_http_client(url, http_client=http))
            s = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
            await s.initialize()
            clients.append(s)
        results = []
        for i, tool, args in steps:
            r = await clients[i].call_tool(tool, args)
            results.append(json.loads(r.content[0].text))
        print(json.dumps({"results": results}))


if __name__ == "__main__":
    try:
        asyncio.run(asyncio.wait_for(main(sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])), 60))
    except BaseException as e:  # the SDK wraps HTTP refusals in exception groups
        print(json.dumps({"refused": repr(e)[:500]}))
