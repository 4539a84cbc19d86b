"""Load driver of bench/serve-load.sh: CLIENTS MCP sessions call `look` on
ids found by `scan` for SECONDS, first alone, then while one more session
runs forest-wide sniffs and 20,000-word locates back to back. Prints the
latency percentiles of the lookers in each phase as JSON.

usage: serve_load.py URL CLIENTS SECONDS [TOKENS_FILE]

TOKENS_FILE holds one bearer token per line; client i uses line i (the heavy
client the last one), as a team's agents each hold their own token and the
server caps requests in flight per token.

PACE=S (environment): each looker waits until S seconds after the start of
its previous call before the next one (an agent thinks between calls), so
the server sees an open load of CLIENTS/S calls per second; 0 (default) is
a closed loop, where the clients' own CPU (one Python process) takes part
of the latency on a small machine.
"""
import os
import random
import asyncio
import json
import statistics
import sys
import time

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


PACE = float(os.environ.get("PACE", "0"))


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(len(xs) * p))], 1) if xs else None


TOKENS = []


async def session(url, body, who=0):
    token = TOKENS[who % len(TOKENS)] if TOKENS else None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                return await body(s)


async def ids_of(url):
    # gen_forest's leaf ids (its branch indexes do not parse: no catalog rows).
    ids = [f"b{f:03}/n{f * 0 + i:07d}" for f in range(1) for i in range(100)]

    async def body(s):
        r = await s.call_tool("look", {"id": ids[0]})
        if r.is_error:
            raise SystemExit(f"look {ids[0]}: {r.content[0].text}")
        return ids
    return await session(url, body)


async def looker(url, ids, until, lat, errors, who):
    async def body(s):
        i = 0
        if PACE > 0:  # spread the clients over one period
            await asyncio.sleep(random.uniform(0.0, PACE))
        while time.monotonic() < until:
            t0 = time.perf_counter()
            r = await s.call_tool("look", {"id": ids[i % len(ids)]})
            lat.append((time.perf_counter() - t0) * 1000.0)
            if r.is_error:
                errors.append(r.content[0].text[:200])
            i += 1
            if PACE > 0:
                await asyncio.sleep(max(0.0, PACE - (time.perf_counter() - t0)))
    await session(url, body, who)


async def heavy(url, until, outcomes):
    async def body(s):
        words = " ".join(["report"] * 20000)
        while time.monotonic() < until:
            for tool, args in [("sniff", {"terms": ["the", "and"], "k": 20}), ("locate", {"query": words[:4000]})]:
                t0 = time.perf_counter()
                r = await s.call_tool(tool, args)
                code = (json.loads(r.content[0].text).get("error") or {}).get("code") if r.is_error else "ok"
                outcomes.append({"tool": tool, "code": code, "ms": round((time.perf_counter() - t0) * 1000.0)})
    await session(url, body, -1)


async def phase(url, ids, clients, seconds, with_heavy):
    lat, errors, outcomes = [], [], []
    until = time.monotonic() + seconds
    tasks = [looker(url, ids, until, lat, errors, i) for i in range(clients)]
    if with_heavy:
        tasks.append(heavy(url, until, outcomes))
    await asyncio.gather(*tasks)
    return {"calls": len(lat), "errors": len(errors), "p50_ms": pct(lat, 0.5), "p95_ms": pct(lat, 0.95),
            "max_ms": round(max(lat), 1) if lat else None,
            "mean_ms": round(statistics.mean(lat), 1) if lat else None, "heavy": outcomes[:20]}


async def main(url, clients, seconds):
    ids = await ids_of(url)
    out = {"clients": clients, "seconds": seconds, "pace_s": PACE}
    out["looks_alone"] = await phase(url, ids, clients, seconds, False)
    out["looks_with_heavy_client"] = await phase(url, ids, clients, seconds, True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 4:
        TOKENS.extend(t.strip() for t in open(sys.argv[4]) if t.strip())
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))
