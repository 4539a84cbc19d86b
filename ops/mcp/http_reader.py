"""Read a forest over MCP streamable HTTP for N seconds (official `mcp` SDK).

usage: http_reader.py URL SECONDS

Walks the forest with scan(after=...) and picks every `doc…` leaf in a loop,
counting calls, tool errors and torn bodies (a body that is neither the
complete first nor the complete second version written by the test).
Prints {"calls", "errors", "torn", "versions"} as JSON.
"""
import asyncio
import json
import sys
import time

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def whole(body):
    if "First batch body" in body:
        return "about pelicans." in body
    if "Second batch body" in body:
        return "much longer" in body and body.count("x ") >= 200
    return False


async def main(url, seconds):
    calls, errors, torn, versions = 0, [], 0, set()
    deadline = time.monotonic() + seconds
    async with streamable_http_client(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as s:
            await s.initialize()
            while time.monotonic() < deadline:
                after, ids = "", []
                while True:
                    r = await s.call_tool("scan", {"parent_id": "_index", "recursive": True, "fields": ["id"], "after": after})
                    calls += 1
                    p = json.loads(r.content[0].text)
                    if r.is_error or "error" in p:
                        errors.append(p)
                        break
                    ids += [n["id"] for n in p["nodes"]]
                    if "next" not in p:
                        break
                    after = p["next"]
                for i in [x for x in ids if "doc" in x][:12]:
                    r = await s.call_tool("pick", {"id": i})
                    calls += 1
                    p = json.loads(r.content[0].text)
                    if r.is_error or "error" in p:
                        # A node renamed between scan and pick is not a torn read.
                        if p.get("error", {}).get("code") != "E_NOT_FOUND":
                            errors.append(p)
                        continue
                    versions.add("second" if "Second" in p["body"] else "first")
                    if not whole(p["body"]):
                        torn += 1
    print(json.dumps({"calls": calls, "errors": errors, "torn": torn, "versions": sorted(versions)}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2])))
