"""Replay the hostile-client attacks of issue 27 against a forest server over
MCP streamable HTTP (official `mcp` SDK), loopback only, bounded.

usage: attack.py URL DATASET_ID

After every attack one honest call (`look _index`) must succeed; a
forest-wide sniff and a huge locate also run concurrently with honest
looks. Prints {"attacks": [{name, is_error, code, honest_ok, honest_ms}],
"concurrent": [...]} as JSON. The caller asserts; this script only records.
"""
import asyncio
import json
import sys
import time

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def attacks(ds):
    wild = "%_" * 20000
    return [
        ("like_20000_wildcards", "query", {"id": ds, "sql": f"SELECT COUNT(*) FROM sales WHERE region LIKE '{wild}'"}),
        ("glob_20000_wildcards", "query", {"id": ds, "sql": "SELECT COUNT(*) FROM sales WHERE region GLOB '" + "*?" * 20000 + "'"}),
        ("randomblob_5e8", "query", {"id": ds, "sql": "SELECT randomblob(5e8)"}),
        ("zeroblob_5e8", "query", {"id": ds, "sql": "SELECT length(zeroblob(500000000))"}),
        ("printf_5e8", "query", {"id": ds, "sql": "SELECT length(printf('%.*c', 500000000, 'x'))"}),
        ("recursive_cte", "query", {"id": ds, "sql": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT max(n) FROM r"}),
        ("doubling_cte", "query", {"id": ds, "sql": "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s||s FROM r) SELECT length(s) FROM r"}),
        ("deep_parens", "query", {"id": ds, "sql": "SELECT " + "(" * 5000 + "1" + ")" * 5000}),
        ("forest_wide_sniff", "sniff", {"terms": ["the", "and", "of"], "k": 20}),
        ("locate_400k_words", "locate", {"query": "pelican " * 400000}),
        ("harvest_400k_words", "harvest", {"query": "pelican " * 400000}),
        ("sniff_long_term", "sniff", {"terms": ["x" * 100000]}),
        ("look_5000_ids", "look", {"id": [f"n/{i}" for i in range(5000)]}),
        ("look_symlink_node", "look", {"id": "sales/leak"}),
        ("pick_symlink_node", "pick", {"id": "sales/leak"}),
        ("pick_symlink_dir", "pick", {"id": "linked/secret"}),
        ("look_unindexed", "look", {"id": "notes/unindexed"}),
        ("id_dotdot", "pick", {"id": "../../../etc/passwd"}),
        ("id_nul", "look", {"id": "sales/\u0000x"}),
        ("bogus_close", "close_session", {"success": True, "answer_nodes": [f"bogus/{i}/" + "x" * 300 for i in range(64)]}),
        ("huge_close", "close_session", {"success": True, "answer_nodes": [f"b/{i}" for i in range(100000)]}),
        ("tend_where_1", "tend", {"id": ds, "sql": "UPDATE sales SET value = 0 WHERE 1"}),
        ("plant_passwd", "plant", {"node": {"id": "notes/evil", "type": "note", "title": "E", "summary": "Escapes.",
                                            "parent": "notes/_index", "payload": "file:///etc/passwd"}}),
        ("unknown_forest", "look", {"id": "_index", "forest": "../other"}),
        ("nested_args", "look", {"id": "_index", "fields": [[[[[["x"]]]]]]}),
    ] + [("heat_close_%d" % i, "close_session", {"success": True, "answer_nodes": ["sales/returns-q1"]}) for i in range(50)]


def code_of(r):
    try:
        p = json.loads(r.content[0].text)
        return (p.get("error") or {}).get("code")
    except Exception:  # noqa: BLE001 - a non-JSON answer is recorded as such
        return "NON_JSON"


async def honest(s):
    t0 = time.perf_counter()
    try:
        r = await s.call_tool("look", {"id": "_index"})
        return (not r.is_error), (time.perf_counter() - t0) * 1000.0
    except Exception:  # noqa: BLE001
        return False, (time.perf_counter() - t0) * 1000.0


async def main(url, ds):
    out = {"attacks": [], "concurrent": []}
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            for name, tool, args in attacks(ds):
                entry = {"name": name}
                try:
                    r = await s.call_tool(tool, args)
                    entry["is_error"] = bool(r.is_error)
                    entry["code"] = code_of(r)
                except Exception as e:  # noqa: BLE001 - a protocol error is an answer too
                    entry["is_error"] = True
                    entry["code"] = "PROTOCOL: " + type(e).__name__
                entry["honest_ok"], entry["honest_ms"] = await honest(s)
                out["attacks"].append(entry)
            for name, tool, args in [
                ("sniff_during_looks", "sniff", {"terms": ["the", "and"], "k": 20}),
                ("huge_locate_during_looks", "locate", {"query": "sales " * 500}),
            ]:
                slow = asyncio.create_task(s.call_tool(tool, args))
                looks = [await honest(s) for _ in range(5)]
                await slow
                out["concurrent"].append({"name": name, "honest_ok": all(ok for ok, _ in looks),
                                          "honest_ms": [ms for _, ms in looks]})
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
