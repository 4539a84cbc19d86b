#!/usr/bin/env python3
"""Three ways to lift the fast encoder's vectors with the full model, scored
offline as the shipped blend (folders first, 50 deep).

    python3 bench/findability/fast_lifts.py MODEL_DIR FORESTS_DIR SETS_DIR SET... [--train SET] [--work DIR]

For each SET: the forest FORESTS_DIR/SET (adopted with the fast canopy),
FORESTS_DIR/SET.cache50.json (fusion.py --depth 50 --cache: the BM25 lists
come from there) and SETS_DIR/SET/questions.json. The variants:

- `shipped`: the fast encoder's query against the fast documents (the
  baseline; fast_encoder.py's arithmetic over the shipped table);
- `full query`: the question embedded by the full model, against the fast
  documents (the table is centred and its top directions removed, so a
  vector's projection onto them does not change a cosine);
- `mapped query`: the full model's question mapped into the fast space by
  a ridge fit (lambda 0.1, 1, 10) on the pairs (full vector of a node's
  scent, fast vector of its text) of the forest FORESTS_DIR/TRAIN-full
  (`forest canopy build --encoder full` on a copy of TRAIN; default the
  SET itself, which has seen the answers' text, not the questions);
- `whole words`: every whitespace word of two or more WordPiece tokens
  embedded whole by the full model in place of its pieces' rows, weighted
  by the sum, the max or the mean of the pieces' rank weights. The full
  model's vector of a word is brought into the table's space by a linear
  fit on the vocabulary's single-token words (embedded by the full model
  as `[CLS] t [SEP]`, as the table was).

Full-model vectors come from `canopy_scan vectors` (cargo build --release
-p forest-canopy --example canopy_scan) and are kept in --work (default
/tmp/fast-lifts). Needs numpy and tokenizers (a venv). Prints R@5 of the
vector ranking and of the blend at a = 0.5-0.7, tuning and report halves.
"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import fast_encoder as fe  # noqa: E402
from fusion import combsum, folders_first  # noqa: E402
from measure import is_hit, load_forest, rank_metrics, source_paths  # noqa: E402

SCAN = os.environ.get("CANOPY_SCAN", "target/release/examples/canopy_scan")
STRIP = ".,;:!?()[]{}\"'`<>*"


def full_vectors(texts, path):
    """The full model's unit vectors of `texts`, cached in `path`."""
    if not os.path.exists(path):
        data = "".join(json.dumps(t) + "\n" for t in texts).encode()
        out = subprocess.run([SCAN, "vectors"], input=data, capture_output=True, check=True).stdout
        open(path, "wb").write(out)
    return np.fromfile(path, "<f4").reshape(len(texts), -1).astype(np.float64)


def forest_texts(forest):
    """Ids and fast-encoder texts (scent, a leaf's 48-word lead) in id order."""
    import sqlite3
    db = sqlite3.connect(f"{forest}/_derived/catalog.db")
    rows = list(db.execute("SELECT n.id, n.title, n.summary, n.aliases, n.tags, coalesce(l.lead, '') "
                           "FROM nodes n LEFT JOIN node_leads l ON l.id = n.id ORDER BY n.id"))
    branch = lambda i: i == "_index" or i.endswith("/_index")  # noqa: E731
    texts = [fe.scent(r[1], r[2], json.loads(r[3] or "[]"), json.loads(r[4] or "[]"))
             + (" " + " ".join(r[5].split()[:48]) if r[5] and not branch(r[0]) else "") for r in rows]
    return [r[0] for r in rows], texts


def score(label, qs, sims, ids, cache, paths):
    line = []
    for half, start in (("tune", 0), ("report", 1)):
        per = {}
        for n in range(start, len(qs), 2):
            q, c = qs[n], cache[qs[n]["question"]]
            top = np.argsort(-sims[n])[:50]
            v, vs = [ids[i] for i in top], {ids[i]: float(sims[n, i]) for i in top}
            b, bs = [i for i, _ in c["bm25"]], dict(map(tuple, c["bm25"]))
            for lab, lst in [("vec", v)] + [(f"a{a}", folders_first(combsum(b, v, bs, vs, a))) for a in (0.5, 0.6, 0.7)]:
                r = next((k + 1 for k, i in enumerate(lst[:10]) if is_hit(paths.get(i), q["targets"])), None)
                per.setdefault(lab, []).append(r)
        ms = {lab: rank_metrics(r, len(r)) for lab, r in per.items()}
        line.append(f"{half}: " + " ".join(f"{lab} {m['R@5']:.3f}" for lab, m in ms.items()))
    print(f"{label:<22} | " + " | ".join(line), flush=True)


def table_map(tok, unit, work):
    """A linear map (with bias) from the full model's raw vectors into the
    table's unit rows, fitted on the vocabulary's single-token words."""
    vocab = sorted(tok.get_vocab().items(), key=lambda x: x[1])
    keep = [(i, s) for s, i in vocab if not s.startswith(("##", "[")) and tok.encode(s, add_special_tokens=False).ids == [i]]
    raw = full_vectors([s for _, s in keep], f"{work}/vocab.f32")
    x = np.hstack([raw, np.ones((len(raw), 1))])
    b, *_ = np.linalg.lstsq(x, unit[[i for i, _ in keep]], rcond=None)

    def apply(v):
        p = np.hstack([v, np.ones((len(v), 1))]) @ b
        return p / np.linalg.norm(p, axis=1, keepdims=True).clip(1e-9)
    return apply


def whole_words(tok, table, w, texts, qtexts, to_table, work, name):
    """Embedders that put each multi-piece word's whole-word vector in place
    of its pieces' rows (weights: the pieces' sum, max or mean)."""
    words = sorted({x.strip(STRIP).lower() for t in texts + qtexts for x in t.split()} - {""})
    multi = [x for x in words if len(tok.encode(x, add_special_tokens=False).ids) >= 2]
    vecs = to_table(full_vectors(multi, f"{work}/{name}.words.f32"))
    at = {x: k for k, x in enumerate(multi)}

    def embed(text, how):
        acc = np.zeros(table.shape[1])
        for raw in text.split():
            core = raw.strip(STRIP)
            ids = tok.encode(raw, add_special_tokens=False).ids
            if core.lower() in at:
                p = tok.encode(core, add_special_tokens=False).ids
                acc += getattr(np, how)(w[p]) * vecs[at[core.lower()]]
                ids = tok.encode(raw.replace(core, " ", 1), add_special_tokens=False).ids
            if ids:
                acc += (table[ids] * w[ids][:, None]).sum(0)
        return acc / (np.linalg.norm(acc) or 1.0)
    return embed


def main():
    args, opts = fe.parse_args(sys.argv[1:])
    model, forests, sets, names = args[0], args[1], args[2], args[3:]
    work = opts.get("--work", "/tmp/fast-lifts")
    os.makedirs(work, exist_ok=True)
    tok, unit, w = fe.load_table(model)
    table = (unit / np.linalg.norm(unit, axis=1, keepdims=True).clip(1e-9)).astype(np.float32)
    to_table = table_map(tok, table.astype(np.float64), work)
    for name in names:
        forest = f"{forests}/{name}"
        ids, texts = forest_texts(forest)
        paths = source_paths(load_forest(forest))
        cache = json.load(open(f"{forest}.cache50.json"))
        qs = [q for q in json.load(open(f"{sets}/{name}/questions.json")) if q["question"] in cache]
        qtexts = [q["question"] for q in qs]
        docs = fe.embed(tok, texts, w, table)
        qfast = fe.embed(tok, qtexts, w, table)
        qfull = full_vectors(qtexts, f"{work}/{name}.questions.f32")
        print(f"== {name}: {len(qs)} questions, {len(ids)} nodes")
        score("shipped", qs, qfast @ docs.T, ids, cache, paths)
        score("full query", qs, qfull @ docs.T, ids, cache, paths)
        train = opts.get("--train", name)
        tids, ttexts = forest_texts(f"{forests}/{train}")
        meta = json.load(open(f"{forests}/{train}-full/_derived/canopy/index.json"))
        tv = np.fromfile(f"{forests}/{train}-full/_derived/canopy/vectors.f32", "<f4").reshape(len(meta["ids"]), -1)
        pos = {i: k for k, i in enumerate(meta["ids"])}
        pairs = [k for k, i in enumerate(tids) if i in pos]
        f = tv[[pos[tids[k]] for k in pairs]].astype(np.float64)
        s = fe.embed(tok, [ttexts[k] for k in pairs], w, table).astype(np.float64)
        for lam in (0.1, 1.0, 10.0):
            m = np.linalg.solve(f.T @ f + lam * np.eye(f.shape[1]), f.T @ s)
            q = qfull @ m
            q /= np.linalg.norm(q, axis=1, keepdims=True)
            score(f"mapped query l{lam:g} ({train})", qs, q @ docs.T, ids, cache, paths)
        embed = whole_words(tok, table, w, texts, qtexts, to_table, work, name)
        for how in ("sum", "max", "mean"):
            d = np.array([embed(t, how) for t in texts], np.float32)
            q = np.array([embed(t, how) for t in qtexts], np.float32)
            score(f"whole words, {how}", qs, q @ d.T, ids, cache, paths)


if __name__ == "__main__":
    main()
