#!/usr/bin/env python3
"""Does fitting the fast encoder's token table to the full model help?

    python3 bench/findability/fit_table.py MODEL_DIR FORESTS_DIR SETS_DIR --train FOREST[,FOREST] SET...
        [--lambda 0.3,1,3,10] [--sample N] [--iters 30]

A tokenlearn-style refinement of the shipped static table: the texts of
the --train forests (each a forest whose canopy the full model built,
`forest canopy build --encoder full`, so its `vectors.f32` holds the
teacher's embedding of every node's scent) as weighted token bags, and a
ridge regression of the teacher's vectors on them, pulled towards the
shipped table by `lambda` (conjugate gradients, all 384 columns at once):

    min_T  sum_j | c_j T - y_j |^2 + lambda | T - T_shipped |^2

where c_j is text j's bag (the shipped rank weight per token), scaled so
that c_j T_shipped has unit length. `--sample N` fits on N random nodes
only (what a budgeted full-model pass over part of a forest would give).
For each fitted table and each SET (FORESTS_DIR/SET with its fast
canopy's SET.cache.json, SETS_DIR/SET/questions.json) it prints what
fast_encoder.py prints: R@5 / MRR of the vector ranking alone and of the
blend at a = 0.4-0.6, tuning and report halves, the shipped table first.

Needs numpy, scipy and tokenizers (a venv). Train on a forest of another
corpus than the sets scored, or say so: a table fitted to a forest's own
nodes has seen the answers' text (not the questions).
"""
import json
import os
import sqlite3
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(__file__))
import fast_encoder as fe  # noqa: E402


def teacher(forest, sample):
    """(scent texts, full-model vectors) of a forest with a full canopy."""
    idx = json.load(open(f"{forest}/_derived/canopy/index.json"))
    if "+static" in idx["model"]:
        raise SystemExit(f"{forest}: its canopy is the fast encoder's; build it with --encoder full")
    vec = np.fromfile(f"{forest}/_derived/canopy/vectors.f32", dtype="<f4").reshape(-1, idx["dim"])
    pos = {i: n for n, i in enumerate(idx["ids"])}
    db = sqlite3.connect(f"file:{forest}/_derived/catalog.db?mode=ro", uri=True)
    texts, ys = [], []
    for nid, title, summary, aliases, tags in db.execute("SELECT id, title, summary, aliases, tags FROM nodes"):
        if nid in pos:
            texts.append(fe.scent(title, summary, json.loads(aliases or "[]"), json.loads(tags or "[]")))
            ys.append(vec[pos[nid]])
    if sample:
        pick = np.random.default_rng(7).choice(len(texts), min(sample, len(texts)), replace=False)
        texts, ys = [texts[i] for i in pick], [ys[i] for i in pick]
    return texts, np.array(ys, dtype=np.float64)


def bags(tok, texts, w, vocab):
    data, rows, cols = [], [], []
    for n, e in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        for t in e.ids:
            rows.append(n)
            cols.append(t)
            data.append(float(w[t]))
    return sp.csr_matrix((data, (rows, cols)), shape=(len(texts), vocab))


def fit(c, y, t0, lam, iters):
    """Block conjugate gradients on (CᵀC + λI) T = CᵀY + λT0."""
    ct = c.T.tocsr()

    def op(x):
        return ct @ (c @ x) + lam * x

    x = t0.copy()
    r = ct @ y + lam * t0 - op(x)
    p, rs = r.copy(), (r * r).sum(0)
    for _ in range(iters):
        ap = op(p)
        alpha = rs / (p * ap).sum(0).clip(1e-30)
        x += p * alpha
        r -= ap * alpha
        rs2 = (r * r).sum(0)
        p = r + p * (rs2 / rs.clip(1e-30))
        rs = rs2
    return x


def mean_cos(c, t, y):
    s = c @ t
    s /= np.linalg.norm(s, axis=1, keepdims=True).clip(1e-9)
    return float((s * y).sum(1).mean())


def main():
    args, opts = fe.parse_args(sys.argv[1:])
    model, forests, sets, names = args[0], args[1], args[2], args[3:]
    tok, unit, w = fe.load_table(model)
    shipped = fe.variant(unit, 8)
    t0 = shipped.astype(np.float64)
    texts, ys = [], []
    for f in opts["--train"].split(","):
        t, y = teacher(f, int(opts.get("--sample", "0")))
        texts += t
        ys.append(y)
    y = np.vstack(ys)
    c = bags(tok, texts, w, t0.shape[0])
    c = (sp.diags(1 / np.linalg.norm(c @ t0, axis=1).clip(1e-9)) @ c).tocsr()
    tables = {"shipped": shipped}
    for lam in (float(x) for x in opts.get("--lambda", "0.3,1,3,10").split(",")):
        start = time.time()
        t = fit(c, y, t0, lam, int(opts.get("--iters", "30")))
        print(f"lambda {lam}: {len(texts)} texts, {time.time() - start:.1f} s, mean cosine to the full model "
              f"{mean_cos(c, t0, y):.3f} -> {mean_cos(c, t, y):.3f}", flush=True)
        tables[f"fit lambda {lam}"] = t.astype(np.float32)
    for s in names:
        fe.evaluate(tok, w, tables, f"{forests}/{s}", f"{sets}/{s}/questions.json", f"{forests}/{s}.cache.json", [48])


if __name__ == "__main__":
    main()
