#!/usr/bin/env python3
"""Offline comparison of ways to fuse `locate`'s BM25 ranking with the
canopy's vector ranking (issues 26 and 31), on forests that have a canopy.

    python3 bench/findability/fusion.py FOREST_BIN FOREST QUESTIONS.json [--ref] [--depth N] [--cache FILE]
        [--half tune|report]

For every question it asks the binary once for each ranking alone (both
`--depth` deep, 25 by default as the binary fuses them at k = 5, BM25
without the token budget)
(`forest locate --json -k N`, `forest canopy search --json -k N`; the
embedding model from FOREST_EMBED_MODEL) and then scores, without asking
again, each fusion of `fusions()` (`--cache` keeps the rankings between
runs): R@1, R@5 and MRR@10 per fusion, as
bench/findability/measure.py counts them (`--ref`: a reference set with
`expected_nodes`). The line `hybrid (binary)` is the binary's own
default `locate` (hybrid with the forest's canopy: `combsum a 0.4` must
reproduce it). `--half tune` keeps the questions at even positions (what a
fusion is chosen on), `--half report` the odd ones (what it is reported
on); a held-out set is run whole. The `ff` lines are variants of the
shipped blend with the binary's folders-first order: give them `--depth
50`, the depth the binary's blend takes at k = 5.
"""
import json
import os
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


def rescaled(scores, how):
    """A ranking's scores min-max scaled ("minmax"), divided by the best
    ("max") or as z-scores over three deviations ("z")."""
    vals = list(scores.values()) or [0.0]
    lo, hi = min(vals), max(vals)
    if how == "minmax":
        return {i: (x - lo) / ((hi - lo) or 1.0) for i, x in scores.items()}
    if how == "max":
        return {i: x / (hi or 1.0) for i, x in scores.items()}
    mean = sum(vals) / len(vals)
    sd = (sum((x - mean) ** 2 for x in vals) / len(vals)) ** 0.5 or 1.0
    return {i: (x - mean) / sd / 3 for i, x in scores.items()}


def blend_scaled(b, v, bs, vs, a):
    """a x BM25 + (1 - a) x the vector scores as given (already scaled)."""
    score = {i: a * bs.get(i, 0.0) + (1 - a) * vs.get(i, 0.0) for i in {*b, *v}}
    order = {i: n for n, i in enumerate([*b, *v][::-1])}
    return sorted(score, key=lambda i: (-score[i], -order[i]))


def combsum(b, v, bs, vs, a):
    """a x BM25 score (max-normalised by locate) + (1 - a) x the cosine
    min-max normalised over the vector list; a node missing from a list
    scores 0 there."""
    return blend_scaled(b, v, bs, rescaled(vs, "minmax"), a)


def capped(ids, cap):
    """At most `cap` results per folder (the id's parent), order kept."""
    seen, out = {}, []
    for i in ids:
        d = i.rsplit("/", 1)[0] if "/" in i else ""
        if i.endswith("/_index"):
            d = d.rsplit("/", 1)[0] if "/" in d else ""
        if seen.get(d, 0) < cap:
            out.append(i)
            seen[d] = seen.get(d, 0) + 1
    return out


def interleave(b, v):
    out = []
    for x, y in zip(b, v):
        out += [i for i in (x, y) if i not in out]
    return out


def folders_first(ids):
    """The binary's blend order (forest-catalog `folders_first`): each
    folder's first leaf and each branch with no leaf of its folder above it
    first, then the rest, order kept."""
    with_leaf, first, rest = set(), [], []
    for i in ids:
        d = i.rsplit("/", 1)[0] if "/" in i else ""
        if i == "_index" or i.endswith("/_index"):
            keep = d not in with_leaf
        else:
            keep = d not in with_leaf
            with_leaf.add(d)
        (first if keep else rest).append(i)
    return first + rest


def slotted(ids, extra, at=4):
    """`extra` at rank `at + 1` unless it is already above."""
    if extra is None or extra in ids[: at + 1]:
        return ids
    rest = [i for i in ids if i != extra]
    return rest[:at] + [extra] + rest[at:]


def spread(scores, n=10):
    top = sorted(scores.values(), reverse=True)[:n]
    return top[0] - top[-1] if len(top) > 1 else 0.0


def folder_fusions():
    """The shipped blend (folders first) and variants of it, for rankings
    `--depth 50` deep as the binary takes them."""
    ff = folders_first
    # a = 0.6 is what the binary uses with the fast encoder's canopy, 0.4 with the full model's
    out = {f"blend {a} ff": lambda b, v, bs, vs, a=a: ff(combsum(b, v, bs, vs, a)) for a in (0.4, 0.5, 0.6, 0.7)}
    out["rrf k60 ff"] = lambda b, v, bs, vs: ff(rrf([b, v], [1.0, 1.0]))
    out["rrf k10 ff"] = lambda b, v, bs, vs: ff(rrf([b, v], [1.0, 1.0], 10))
    out["blend 0.6 ff, bm25 min-max"] = lambda b, v, bs, vs: ff(combsum(b, v, rescaled(bs, "minmax"), vs, 0.6))
    for how in ("max", "z"):
        out[f"blend 0.6 ff, cosine {how}"] = lambda b, v, bs, vs, how=how: ff(blend_scaled(b, v, bs, rescaled(vs, how), 0.6))
    out["blend 0.6 ff, vector #1 at 5"] = lambda b, v, bs, vs: slotted(ff(combsum(b, v, bs, vs, 0.6)), (v or [None])[0])
    out["blend 0.6 ff, bm25 #1 at 5"] = lambda b, v, bs, vs: slotted(ff(combsum(b, v, bs, vs, 0.6)), (b or [None])[0])
    for c in (0.25, 0.5):
        out[f"blend ff, a by bm25 spread c {c}"] = lambda b, v, bs, vs, c=c: ff(
            combsum(b, v, bs, vs, min(0.9, max(0.1, 0.6 + c * (spread(bs) - 0.3)))))
    return out


def fusions():
    out = {"bm25": lambda b, v, bs, vs: b, "vector": lambda b, v, bs, vs: v}
    for w in (1.0, 1.5, 2.0, 0.7):
        out[f"rrf k60 w_vec {w}"] = lambda b, v, bs, vs, w=w: rrf([b, v], [1.0, w])
    for k in (10, 30):
        out[f"rrf k{k}"] = lambda b, v, bs, vs, k=k: rrf([b, v], [1.0, 1.0], k)
    for a in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        out[f"combsum a {a}"] = lambda b, v, bs, vs, a=a: combsum(b, v, bs, vs, a)
        out[f"combsum a {a} cap 2"] = lambda b, v, bs, vs, a=a: capped(combsum(b, v, bs, vs, a), 2)
    out["interleave"] = lambda b, v, bs, vs: interleave(b, v)
    pin = lambda b, rest: b[:1] + [i for i in rest if i not in b[:1]]  # noqa: E731
    for a in (0.3, 0.4):
        out[f"bm25 #1 + combsum {a} cap 2"] = lambda b, v, bs, vs, a=a: pin(b, capped(combsum(b, v, bs, vs, a), 2))
    out["bm25 #1 + rrf w1.5 cap 2"] = lambda b, v, bs, vs: pin(b, capped(rrf([b, v], [1.0, 1.5]), 2))
    out["bm25 #1 + rrf"] = lambda b, v, bs, vs: pin(b, rrf([b, v], [1.0, 1.0]))
    for cap in (1, 2):
        out[f"bm25 #1 + rrf cap {cap}"] = lambda b, v, bs, vs, cap=cap: pin(b, capped(rrf([b, v], [1.0, 1.0]), cap))
    for cap in (1, 2):
        out[f"bm25 cap {cap}/folder"] = lambda b, v, bs, vs, cap=cap: capped(b, cap)
        out[f"vector cap {cap}/folder"] = lambda b, v, bs, vs, cap=cap: capped(v, cap)
        out[f"rrf k60 cap {cap}"] = lambda b, v, bs, vs, cap=cap: capped(rrf([b, v], [1.0, 1.0]), cap)
        out[f"rrf w1.5 cap {cap}"] = lambda b, v, bs, vs, cap=cap: capped(rrf([b, v], [1.0, 1.5]), cap)
    return {**out, **folder_fusions()}


def main():
    args = sys.argv[1:]
    ref = "--ref" in args
    # 25: the depth of each ranking the binary fuses at k = 5 (max(5k, 25))
    depth = int(args[args.index("--depth") + 1]) if "--depth" in args else 25
    binary, forest, qfile = [a for a in args if not a.startswith("--") and not a.isdigit()][:3]
    qs = json.load(open(qfile))
    half = args[args.index("--half") + 1] if "--half" in args else None
    if half in ("tune", "report"):
        qs = qs[0 if half == "tune" else 1::2]
    paths = None if ref else source_paths(load_forest(forest))
    fs = fusions()
    cache_file = args[args.index("--cache") + 1] if "--cache" in args else None
    cache = json.load(open(cache_file)) if cache_file and os.path.exists(cache_file) else {}
    ranks = {name: [] for name in [*fs, "default locate (binary)", "union of bm25@5 and vector@5 (ceiling)"]}
    for q in qs:
        text = q["question"]
        if text not in cache:
            b = run_json([binary, "locate", "--forest", forest, "--json", "-k", str(depth), "--fusion", "bm25",
                          "--budget", "0", "--", text])["results"]
            v = run_json([binary, "canopy", "search", "--forest", forest, "--json", "-k", str(depth), "--", text])
            h = run_json([binary, "locate", "--forest", forest, "--json", "-k", "10", "--", text])["results"]
            cache[text] = {"bm25": [[r["id"], r["score"]] for r in b], "vector": [[x["id"], x["similarity"]] for x in v],
                           "hybrid": [r["id"] for r in h]}
        c = cache[text]
        b, v = [i for i, _ in c["bm25"]], [i for i, _ in c["vector"]]
        bs, vs = dict(map(tuple, c["bm25"])), dict(map(tuple, c["vector"]))
        lists = {name: f(b, v, bs, vs) for name, f in fs.items()}
        lists["default locate (binary)"] = c["hybrid"]
        union = [*b[:5], *[i for i in v[:5] if i not in b[:5]]]
        lists["union of bm25@5 and vector@5 (ceiling)"] = union
        for name, got in lists.items():
            ceiling = name.startswith("union")
            got = got if ceiling else got[:10]
            if ceiling and ref:
                want = set(q["expected_nodes"])
                ranks[name].append((1 if want & set(got) else None, (len(want & set(got)), len(want))))
            elif ceiling:
                ranks[name].append((1 if any(is_hit(paths.get(i), q["targets"]) for i in got) else None, None))
            elif ref:
                # As measure.py --ref: locate -k 5, recall over every
                # expected node of the set, MRR of the first one.
                want = set(q["expected_nodes"])
                r = next((n + 1 for n, i in enumerate(got[:5]) if i in want), None)
                ranks[name].append((r, (len(want & set(got[:5])), len(want))))
            else:
                r = next((n + 1 for n, i in enumerate(got) if is_hit(paths.get(i), q["targets"])), None)
                ranks[name].append((r, None))
    if cache_file:
        json.dump(cache, open(cache_file, "w"))
    n = len(qs)
    print(f"{qfile}: {n} questions" + (f" ({half} half)" if half else ""))
    for name, rs in ranks.items():
        m = rank_metrics([r for r, _ in rs], n)
        if ref:
            m["R@5"] = round(sum(x[0] for _, x in rs) / sum(x[1] for _, x in rs), 3)
        print(f"  {name:<20} R@1 {m['R@1']:.3f}  R@5 {m['R@5']:.3f}  MRR {m['MRR']:.3f}")


if __name__ == "__main__":
    main()
