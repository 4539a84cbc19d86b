#!/usr/bin/env python3
"""Offline variants of the fast encoder, scored like fusion.py.

    python3 bench/findability/fast_encoder.py MODEL_DIR FORESTS_DIR SETS_DIR SET... [--directions 0,8,16] [--lead 0,48]
        [--table FILE]

Needs numpy and tokenizers (a venv: `pip install numpy tokenizers`). Reads
a fast encoder's cached table (`--table`, default the `forest-static2-*.f32`
beside the model that any `forest` run with FOREST_EMBED_MODEL writes; the
first recipe's `forest-static-*.f32`, which an older binary wrote, is the
table before any direction was removed), undoes its rank weight, and
rebuilds variants of it: the centred table with its top D
principal directions removed (D = 0 keeps them; the shipped table has 8),
and texts of scent alone or scent plus a leaf's first L body words (the
catalog's `node_leads`, which hold 48). For each forest FORESTS_DIR/SET
(adopted with `forest adopt`, with a `SET.cache.json` that fusion.py wrote:
the BM25 lists come from there) and questions SETS_DIR/SET/questions.json,
it prints R@5/MRR of the vector ranking alone and of blend a = 0.4-0.6
(fusion.py's combsum) on the tuning half (even questions) and the report
half (odd ones).
"""
import glob
import json
import os
import sqlite3
import sys

import numpy as np
from tokenizers import Tokenizer

sys.path.insert(0, os.path.dirname(__file__))
from fusion import combsum  # noqa: E402
from measure import is_hit, load_forest, rank_metrics, source_paths  # noqa: E402


def load_table(model, table=None):
    raw = open(table or glob.glob(f"{model}/forest-static2-*.f32")[0], "rb").read()
    rows, dim = np.frombuffer(raw[8:16], dtype="<u4")
    t = np.frombuffer(raw[16:], dtype="<f4").reshape(rows, dim).astype(np.float64)
    tok = Tokenizer.from_file(f"{model}/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(512)
    first = tok.token_to_id("the")
    w = np.log(2 + np.maximum(0, np.arange(rows) - first))
    return tok, t / w[:, None], w.astype(np.float32)


def variant(unit, d):
    """The rows centred, the top d principal directions removed, renormalised."""
    c = unit - unit.mean(0)
    if d:
        _, _, vt = np.linalg.svd(c, full_matrices=False)
        c = c - (c @ vt[:d].T) @ vt[:d]
    return (c / np.linalg.norm(c, axis=1, keepdims=True).clip(1e-9)).astype(np.float32)


def scent(t, s, a, g):
    x = f"{t.strip()}. {s.strip()}"
    if a:
        x += " Also: " + ", ".join(a) + "."
    if g:
        x += " Tags: " + ", ".join(g) + "."
    return x


def embed(tok, texts, w, table):
    out = np.zeros((len(texts), table.shape[1]), np.float32)
    for n, e in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        if e.ids:
            ids = np.array(e.ids)
            v = (table[ids] * w[ids][:, None]).sum(0)
            out[n] = v / (np.linalg.norm(v) or 1.0)
    return out


def evaluate(tok, w, tables, forest, qfile, cache_file, leads):
    db = sqlite3.connect(f"{forest}/_derived/catalog.db")
    rows = list(db.execute("SELECT n.id, n.title, n.summary, n.aliases, n.tags, coalesce(l.lead, '') "
                           "FROM nodes n LEFT JOIN node_leads l ON l.id = n.id ORDER BY n.id"))
    ids = [r[0] for r in rows]
    paths = source_paths(load_forest(forest))
    cache = json.load(open(cache_file))
    qs = [q for q in json.load(open(qfile)) if q["question"] in cache]
    for lead in leads:
        texts = [scent(r[1], r[2], json.loads(r[3] or "[]"), json.loads(r[4] or "[]"))
                 + (" " + " ".join(r[5].split()[:lead]) if lead and r[5] else "") for r in rows]
        for d, table in tables.items():
            dv, qv = embed(tok, texts, w, table), embed(tok, [q["question"] for q in qs], w, table)
            sims = qv @ dv.T
            line = []
            for half, start in (("tune", 0), ("report", 1)):
                per = {}
                for n in range(start, len(qs), 2):
                    q, c = qs[n], cache[qs[n]["question"]]
                    top = np.argsort(-sims[n])[:25]
                    v, vs = [ids[i] for i in top], {ids[i]: float(sims[n, i]) for i in top}
                    b, bs = [i for i, _ in c["bm25"]], dict(map(tuple, c["bm25"]))
                    for lab, lst in [("vec", v)] + [(f"a{a}", combsum(b, v, bs, vs, a)) for a in (0.4, 0.5, 0.6)]:
                        r = next((k + 1 for k, i in enumerate(lst[:10]) if is_hit(paths.get(i), q["targets"])), None)
                        per.setdefault(lab, []).append(r)
                ms = {lab: rank_metrics(r, len(r)) for lab, r in per.items()}
                line.append(f"{half}: " + " ".join(f"{lab} {m['R@5']:.3f}/{m['MRR']:.3f}" for lab, m in ms.items()))
            print(f"{os.path.basename(forest)} directions {d} lead {lead} | " + " | ".join(line), flush=True)


def parse_args(argv):
    """(positional arguments, {"--name": value})."""
    argv, args, opts = list(argv), [], {}
    while argv:
        a = argv.pop(0)
        if a.startswith("--"):
            opts[a] = argv.pop(0)
        else:
            args.append(a)
    return args, opts


def main():
    args, opts = parse_args(sys.argv[1:])
    opt = opts.get
    model, forests, sets, names = args[0], args[1], args[2], args[3:]
    tok, unit, w = load_table(model, opt("--table"))
    tables = {int(d): variant(unit, int(d)) for d in (opt("--directions") or "0,8,16").split(",")}
    leads = [int(x) for x in (opt("--lead") or "0,48").split(",")]
    for s in names:
        evaluate(tok, w, tables, f"{forests}/{s}", f"{sets}/{s}/questions.json", f"{forests}/{s}.cache.json", leads)


if __name__ == "__main__":
    main()
