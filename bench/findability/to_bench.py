#!/usr/bin/env python3
"""A findability question set as a `forest bench` question file (issue 29).

    python3 bench/findability/to_bench.py FOREST QUESTIONS.json OUT.json [N]

The findability sets (bench/findability/build_sets.py) name source paths
as targets; `forest bench` grades node ids. Every node of the adopted
FOREST whose source path is a target or lies under one (measure.py's rule:
a branch's source path is the common folder of its leaves) becomes an
expected node, so `banana_precision > 0` means the arm reached the target.
`answer_contains` is the target's last path component (the package or
distribution name the question describes): an answer is correct when it
names it. Questions whose target has no node are dropped (counted on
stderr); N keeps the first N questions (by id order) after that.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import is_hit, load_forest, source_paths  # noqa: E402


def main():
    forest, qfile, out = sys.argv[1:4]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else None
    paths = source_paths(load_forest(forest))
    qs, dropped = [], 0
    for q in json.load(open(qfile)):
        want = sorted(nid for nid, p in paths.items() if is_hit(p, q["targets"]))
        if not want:
            dropped += 1
            continue
        name = q["targets"][0].rstrip("/").rsplit("/", 1)[-1]
        qs.append({"id": q["id"], "question": q["question"], "expected_nodes": want, "answer_contains": [name]})
    if n is not None:
        qs = qs[:n]
    json.dump(qs, open(out, "w"), indent=1, ensure_ascii=False)
    print(f"{len(qs)} questions ({dropped} dropped: target without a node)", file=sys.stderr)


if __name__ == "__main__":
    main()
