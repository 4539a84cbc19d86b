#!/usr/bin/env python3
"""Offline comparison of ways to fuse `locate`'s BM25 ranking with the
canopy's vector ranking (issues 26 and 31), on forests that have a canopy.

    python3 bench/findability/fusion.py FOREST_BIN FOREST QUESTIONS.json [--ref] [--depth N]

For every question it asks the binary once for each ranking alone
(`forest locate --json -k N`, `forest canopy search --json -k N`; the
embedding model from FOREST_EMBED_MODEL) and then scores, without asking
again, each fusion in FUSIONS: R@1, R@5 and MRR@10 per fusion, as
bench/findability/measure.py counts them (`--ref`: a reference set with
`expected_nodes`). The line `hybrid (binary)` is the binary's own
`locate --hybrid`, to check that `rrf k60` reproduces it.
"""
import json
import subprocess
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from measure import is_hit, load_forest, rank_metrics, source_paths  # noqa: E402


def run_json(args):
    o = subprocess.run(args, capture_output=True, text=True)
    if o.returncode != 0:
        raise SystemExit(f"{' '.join(args[:3])}: {o.stderr.strip()}")
    return json.loads(o.stdout)


def rrf(lists, weights, k=60.0):
    score = {}
    for lst, w in zip(lists, weights):
        for r, i in enumerate(lst):
            score[i] = score.get(i, 0.0) + w / (k + r + 1)
    # Stable: BM25 order first among ties, then the vector's.
    order = {i: n for n, i in enumerate([*lists[0], *lists[1]][::-1])}
    return sorted(score, key=lambda i: (-score[i], -order[i]))


def fusions():
    out = {"bm25": lambda b, v: b, "vector": lambda b, v: v}
    for w in (1.0, 0.7, 0.5, 0.35):
        out[f"rrf k60 w_vec {w}"] = lambda b, v, w=w: rrf([b, v], [1.0, w])
    for k in (10, 30):
        out[f"rrf k{k}"] = lambda b, v, k=k: rrf([b, v], [1.0, 1.0], k)
    # BM25's first hit kept first, the rest fused.
    out["bm25 top1 + rrf"] = lambda b, v: (b[:1] + [i for i in rrf([b, v], [1.0, 1.0]) if i not in b[:1]])
    return out


def main():
    args = sys.argv[1:]
    ref = "--ref" in args
    depth = int(args[args.index("--depth") + 1]) if "--depth" in args else 50
    binary, forest, qfile = [a for a in args if not a.startswith("--") and not a.isdigit()][:3]
    qs = json.load(open(qfile))
    paths = None if ref else source_paths(load_forest(forest))
    fs = fusions()
    ranks = {name: [] for name in [*fs, "hybrid (binary)"]}
    for q in qs:
        text = q["question"]
        b = [r["id"] for r in run_json([binary, "locate", "--forest", forest, "--json", "-k", str(depth), "--", text])["results"]]
        v = [h["id"] for h in run_json([binary, "canopy", "search", "--forest", forest, "--json", "-k", str(depth), "--", text])]
        h = [r["id"] for r in run_json([binary, "locate", "--forest", forest, "--json", "-k", "10", "--hybrid", "--", text])["results"]]
        lists = {name: f(b, v) for name, f in fs.items()}
        lists["hybrid (binary)"] = h
        for name, got in lists.items():
            got = got[:10]
            if ref:
                # As measure.py --ref: locate -k 5, recall over every
                # expected node of the set, MRR of the first one.
                want = set(q["expected_nodes"])
                r = next((n + 1 for n, i in enumerate(got[:5]) if i in want), None)
                ranks[name].append((r, (len(want & set(got[:5])), len(want))))
            else:
                r = next((n + 1 for n, i in enumerate(got) if is_hit(paths.get(i), q["targets"])), None)
                ranks[name].append((r, None))
    n = len(qs)
    print(f"{qfile}: {n} questions")
    for name, rs in ranks.items():
        m = rank_metrics([r for r, _ in rs], n)
        if ref:
            m["R@5"] = round(sum(x[0] for _, x in rs) / sum(x[1] for _, x in rs), 3)
        print(f"  {name:<20} R@1 {m['R@1']:.3f}  R@5 {m['R@5']:.3f}  MRR {m['MRR']:.3f}")


if __name__ == "__main__":
    main()
