#!/usr/bin/env python3
"""One `forest ranger run --json` report (and its `.err` log beside it) in
two lines: commit, links promoted and pruned, the health cache's hits and
misses, and the phase timings. Used by ranger-first.sh and ranger-clone.sh.

    python3 bench/ranger_summary.py REPORT.json
"""
import json
import re
import sys

out = sys.argv[1]
r = json.load(open(out))
t = r["timings_ms"]
err = re.sub(r"\x1b\[[0-9;]*m", "", open(out + ".err").read())
cache = re.findall(r"hits=(\d+) misses=(\d+)", err)
print(f"  commit {r['commit']}  promoted {len(r['links']['promoted'])} pruned {len(r['links']['pruned'])}  "
      f"health cache hits/misses {cache[-1] if cache else '?'}")
print("  timings_ms " + ", ".join(f"{k} {v:.0f}" for k, v in t.items()))
