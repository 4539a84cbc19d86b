#!/usr/bin/env python3
"""Findability of one adopted forest for one question set (issue 26).

    python3 bench/findability/measure.py FOREST_BIN FOREST QUESTIONS.json [--ref] [--k K]

Question sets of bench/findability/build_sets.py carry `targets` (source
paths: a folder or a file); a result hits when its source path is a target or
lies under one (a branch's source path is the common folder of the leaves
under it, so a bucket holding several packages never hits). With `--ref` the
set is a reference set (`expected_nodes`, node ids; forests/fixtures):
recall@5 counts expected nodes found in the top 5, MRR the first one's rank.

Prints one JSON object on stdout with, per method, R@1, R@5 and MRR@K:
- `locate`: `forest locate --json -k K` (the binary under test);
- `bm25_body`: SQLite FTS5 BM25 over the leaves' whole bodies (OR of the
  question's words): the lexical ceiling;
- `descent`: model-free greedy descent from the master `_index`: at each
  step the child (branch or leaf) whose scent (title, summary, tags,
  aliases) best matches the question (BM25-like term overlap, IDF over all
  nodes' scent); success when it enters a target within 14 hops.
and scent facts: leaves, leaves with >= 100 body words, how many of those
carry >= 2 tags, and leaves titled only by generic file-stem words
(`README`, `copyright`, `changelog.Debian`, `NEWS`...).
"""
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
from collections import Counter

WORD = re.compile(r"[0-9A-Za-z]+")
GENERIC = {"readme", "index", "copyright", "changelog", "news", "notes", "install", "todo", "authors", "thanks",
           "debian", "bugs", "history", "changes", "faq", "license", "licence", "copying", "contributing", "init",
           "md", "txt", "gz", "html", "rst", "release", "credits", "maintainers", "upstream", "source", "py", "main",
           "about", "usage", "examples", "example", "doc", "docs", "intro"}
MAX_HOPS = 14


def words(s):
    return [w.lower() for w in WORD.findall(s or "")]


def unquote(v):
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] == "'":
        return v[1:-1].replace("''", "'")
    if len(v) >= 2 and v[0] == v[-1] == '"':
        try:
            return json.loads(v)
        except ValueError:
            return v[1:-1]
    return v


def parse_node(text):
    """Top-level scalar and list keys of the front matter, and the body."""
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text
    front, body = text[3:end], text[end + 4:]
    meta, key = {}, None
    for line in front.splitlines():
        if not line.strip():
            continue
        if line.startswith((" ", "-")) and key:
            item = line.strip()
            if item.startswith("- "):
                if isinstance(meta.get(key), list):
                    meta[key].append(unquote(item[2:]))
            elif isinstance(meta.get(key), str):
                meta[key] += " " + item  # folded continuation
            continue
        k, _, v = line.partition(":")
        key = k.strip()
        v = v.strip()
        if v.startswith("[") and v.endswith("]"):
            meta[key] = [unquote(x) for x in v[1:-1].split(",") if x.strip()]
        elif v == "":
            meta[key] = []
        else:
            meta[key] = unquote(v)
    return meta, body


def load_forest(root):
    nodes = {}
    for dp, dns, fns in os.walk(root):
        rel_dir = os.path.relpath(dp, root)
        dns[:] = [d for d in dns if not d.startswith((".", "_derived", "_meta", "_assets"))]
        for fn in fns:
            if not fn.endswith(".md"):
                continue
            rel = fn if rel_dir == "." else f"{rel_dir}/{fn}"
            with open(os.path.join(dp, fn), encoding="utf-8", errors="replace") as f:
                meta, body = parse_node(f.read())
            nid = rel[:-3]
            meta["_body"] = body
            meta["_dir"] = "" if rel_dir == "." else rel_dir
            meta["_branch"] = fn == "_index.md"
            nodes[nid] = meta
    return nodes


def source_paths(nodes):
    """id -> source path: a leaf's `source_path`, a branch's common folder of the leaves under it."""
    common = {}
    for nid, m in nodes.items():
        sp = m.get("source_path")
        if m["_branch"] or not isinstance(sp, str):
            continue
        folder = sp.rsplit("/", 1)[0] if "/" in sp else ""
        d = m["_dir"]
        while True:
            cur = common.get(d)
            if cur is None:
                common[d] = folder.split("/") if folder else []
            else:
                fs = folder.split("/") if folder else []
                i = 0
                while i < min(len(cur), len(fs)) and cur[i] == fs[i]:
                    i += 1
                common[d] = cur[:i]
            if not d:
                break
            d = d.rsplit("/", 1)[0] if "/" in d else ""
    out = {}
    for nid, m in nodes.items():
        if m["_branch"]:
            c = common.get(m["_dir"])
            out[nid] = "/".join(c) if c else None
        elif isinstance(m.get("source_path"), str):
            out[nid] = m["source_path"]
    return out


def is_hit(path, targets):
    return path is not None and path != "" and any(path == t or path.startswith(t + "/") for t in targets)


def rank_metrics(ranks, n):
    return {"R@1": round(sum(1 for r in ranks if r == 1) / n, 3),
            "R@5": round(sum(1 for r in ranks if r and r <= 5) / n, 3),
            "MRR": round(sum(1.0 / r for r in ranks if r) / n, 3)}


def locate(binary, forest, question, k):
    # LOCATE_EXTRA="--fusion bm25": BM25 alone (bench/findability.sh without HYBRID=1).
    extra = os.environ.get("LOCATE_EXTRA", "").split()
    o = subprocess.run([binary, "locate", "--forest", forest, "--json", "-k", str(k), *extra, "--", question],
                       capture_output=True, text=True)
    if o.returncode != 0:
        return []
    return [r["id"] for r in json.loads(o.stdout).get("results", [])]


class Bm25Body:
    def __init__(self, nodes):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE b USING fts5(id UNINDEXED, body)")
        self.db.executemany("INSERT INTO b VALUES (?, ?)",
                            [(nid, m["_body"]) for nid, m in nodes.items() if not m["_branch"]])

    def search(self, question, k):
        terms = sorted(set(words(question)))
        if not terms:
            return []
        q = " OR ".join(f'"{t}"' for t in terms)
        return [r[0] for r in self.db.execute("SELECT id FROM b WHERE b MATCH ? ORDER BY bm25(b) LIMIT ?", (q, k))]


def scent_words(m):
    parts = [m.get("title") or ""]
    parts.append(m.get("summary") or "")
    for key in ("tags", "aliases"):
        v = m.get(key)
        parts.extend(v if isinstance(v, list) else [v or ""])
    return words(" ".join(str(p) for p in parts))


class Descent:
    def __init__(self, nodes):
        self.nodes = nodes
        self.tf = {nid: Counter(scent_words(m)) for nid, m in nodes.items()}
        self.len = {nid: sum(c.values()) for nid, c in self.tf.items()}
        self.avg = sum(self.len.values()) / max(1, len(self.len))
        df = Counter(w for c in self.tf.values() for w in c)
        n = len(nodes)
        self.idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
        self.children = {}
        for nid, m in nodes.items():
            if nid == "_index":
                continue
            if m["_branch"]:
                d = m["_dir"]
                parent = (d.rsplit("/", 1)[0] + "/_index") if "/" in d else "_index"
            else:
                parent = (m["_dir"] + "/_index") if m["_dir"] else "_index"
            self.children.setdefault(parent, []).append(nid)

    def score(self, nid, q):
        tf, ln = self.tf[nid], self.len[nid]
        s = 0.0
        for w in q:
            f = tf.get(w, 0)
            if f:
                s += self.idf[w] * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * ln / self.avg))
        return s

    def walk(self, question, paths, targets):
        q = set(words(question))
        cur = "_index"
        for hop in range(1, MAX_HOPS + 1):
            kids = self.children.get(cur, [])
            if not kids:
                return None
            best = max(kids, key=lambda c: (self.score(c, q), c))
            if self.score(best, q) <= 0:
                return None
            if is_hit(paths.get(best), targets):
                return hop
            if not self.nodes[best]["_branch"]:
                return None
            cur = best
        return None


def generic_title(title):
    ws = words(title)
    return bool(ws) and all(w in GENERIC for w in ws)


def scent_facts(nodes):
    leaves = [m for m in nodes.values() if not m["_branch"]]
    long_ = [m for m in leaves if len(m["_body"].split()) >= 100]
    tags2 = [m for m in long_ if isinstance(m.get("tags"), list) and len(m["tags"]) >= 2]
    generic = [m.get("title") for m in leaves if generic_title(str(m.get("title") or ""))]
    return {"nodes": len(nodes), "leaves": len(leaves), "leaves_100_words": len(long_),
            "leaves_100_words_with_2_tags": len(tags2), "generic_titles": len(generic),
            "generic_title_examples": sorted(Counter(generic).items(), key=lambda x: -x[1])[:5]}


def main():
    args = sys.argv[1:]
    ref = "--ref" in args
    k = 10
    if "--k" in args:
        k = int(args[args.index("--k") + 1])
    binary, forest, qfile = [a for a in args if not a.startswith("--") and not a.isdigit()][:3]
    nodes = load_forest(forest)
    qs = json.load(open(qfile))
    if ref:
        hit = total = 0
        rr = 0.0
        for q in qs:
            got = locate(binary, forest, q["question"], 5)
            want = q["expected_nodes"]
            total += len(want)
            hit += sum(1 for w in want if w in got)
            rr += next((1.0 / (i + 1) for i, g in enumerate(got) if g in want), 0.0)
        print(json.dumps({"questions": len(qs), "locate": {"R@5": round(hit / total, 3), "MRR": round(rr / len(qs), 3)}}))
        return
    paths = source_paths(nodes)
    bm, de = Bm25Body(nodes), Descent(nodes)
    ranks = {"locate": [], "bm25_body": []}
    hops, misses = [], []
    for q in qs:
        for name, got in (("locate", locate(binary, forest, q["question"], k)), ("bm25_body", bm.search(q["question"], k))):
            r = next((i + 1 for i, g in enumerate(got) if is_hit(paths.get(g), q["targets"])), None)
            ranks[name].append(r)
            if name == "locate" and (r is None or r > 5):
                misses.append(q["id"])
        hops.append(de.walk(q["question"], paths, q["targets"]))
    n = len(qs)
    out = {"questions": n}
    for name, rs in ranks.items():
        out[name] = rank_metrics(rs, n)
    reached = [h for h in hops if h]
    out["descent"] = {"success": round(len(reached) / n, 3),
                      "mean_hops": round(sum(reached) / len(reached), 2) if reached else None}
    out["scent"] = scent_facts(nodes)
    out["locate_misses_at_5"] = misses
    print(json.dumps(out))


if __name__ == "__main__":
    main()
