#!/usr/bin/env python3
"""Grow a forests/gen_corpus.py tree: add PERCENT more files to every folder
that holds files, numbered after the largest number in the tree, in the
generator's md/txt/csv mix (issue 14: a sync that grows every folder by 10%
must move no existing node).

    python3 bench/grow_corpus.py SRC [PERCENT] [--seed 11]

Prints the files added. Standard library only; deterministic for a given
tree, PERCENT and seed.
"""
import argparse
import os
import random
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "forests"))
from gen_corpus import make_file  # noqa: E402

NUM = re.compile(r"-(\d{6,})\.(md|txt|csv)$")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("percent", nargs="?", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    folders = []
    top = -1
    for dirpath, dirnames, filenames in os.walk(a.src):
        dirnames.sort()
        files = [f for f in filenames if NUM.search(f)]
        if files:
            folders.append((dirpath, len(files)))
            top = max(top, max(int(NUM.search(f).group(1)) for f in files))
    rng = random.Random(a.seed)
    i = top + 1
    added = 0
    for folder, n in folders:
        for _ in range(max(1, round(n * a.percent / 100))):
            name, text = make_file(rng, i)
            with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
                f.write(text)
            i += 1
            added += 1
    print(f"added {added} files to {len(folders)} folders")


if __name__ == "__main__":
    main()
