"""p50/p95 per call of an ops/mcp/client.py run.
usage: vine_summary.py RESULT.json SCRIPT.json"""
import json, sys
d = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
by = {}
for step, c in zip(s, d["calls"]):
    key = step["tool"] + " " + json.dumps(step["args"])[:70]
    by.setdefault(key, []).append(c["ms"])
    if c.get("is_error"): print("ERROR", key, c["text"][:200])
for k, v in by.items():
    v.sort(); print("%-80s p50 %8.3f  p95 %8.3f ms" % (k, v[len(v)//2], v[int((len(v)-1)*0.95)]))
