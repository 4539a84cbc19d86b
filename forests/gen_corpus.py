#!/usr/bin/env python3
"""Deterministic synthetic source corpus for tests and benchmarks.

    python3 forests/gen_corpus.py --files 10000 --out /tmp/corpus [--seed 7] [--layout mixed|wide|deep]

Writes a md/txt/csv mix (70/20/10) with prose from a fixed vocabulary so
summaries, titles and FTS terms vary. Layouts:
  mixed (default) nested 1-4 folders deep, random folder per file;
  wide            few flat folders of ~5,000 files each (ceil(N/5000) folders);
  deep            folders 6-8 levels deep holding ~30 files each.
Standard library only; same arguments -> byte-identical tree (mtimes aside).
"""
import argparse
import os
import random

WORDS = (
    "gripper torque sensor lidar conveyor budget audit invoice supplier quarterly roadmap "
    "firmware calibration warehouse forklift pallet shipment customs tariff compliance "
    "hiring onboarding payroll review incident outage latency throughput battery motor "
    "servo encoder vision camera depth thermal safety inspection maintenance schedule "
    "contract renewal pricing discount margin revenue forecast region north south east west"
).split()
FOLDERS = ["ops", "sales", "eng", "hr", "legal", "support", "finance", "research"]


def sentence(rng, n=None):
    n = n or rng.randint(6, 16)
    w = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(w).capitalize() + "."


def wide_folder(i):
    """~5,000 consecutive files per flat folder."""
    f = i // 5000
    return ["%s-%04d" % (FOLDERS[f % len(FOLDERS)], f)]


def deep_folder(i):
    """~30 files per folder; folders 6-8 levels deep, 4 children per level,
    so neighbouring folders share their ancestors."""
    f = i // 30
    depth = 6 + f % 3
    parts = []
    for level in range(depth):
        k = f // (4 ** (depth - 1 - level))
        parts.append("%s-%d" % (FOLDERS[k % len(FOLDERS)], k % 4 if level else k // 4))
    return parts


def make_file(rng, i):
    """One file of the md/txt/csv mix numbered i: (name, text)."""
    kind = rng.random()
    if kind < 0.7:
        name = "doc-%06d.md" % i
        title = " ".join(rng.choice(WORDS) for _ in range(3)).title()
        paras = "\n\n".join(" ".join(sentence(rng) for _ in range(rng.randint(2, 6))) for _ in range(rng.randint(1, 5)))
        text = "# %s %d\n\n%s\n" % (title, i, paras)
    elif kind < 0.9:
        name = "note-%06d.txt" % i
        text = " ".join(sentence(rng) for _ in range(rng.randint(2, 8))) + "\n"
    else:
        name = "table-%06d.csv" % i
        rows = ["id,item,region,qty,amount"]
        for r in range(rng.randint(3, 40)):
            rows.append("%d,%s,%s,%d,%.2f" % (r, rng.choice(WORDS), rng.choice(["north", "south", "east", "west"]),
                                              rng.randint(1, 500), rng.random() * 10000))
        text = "\n".join(rows) + "\n"
    return name, text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--layout", choices=["mixed", "wide", "deep"], default="mixed")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    made = set()
    for i in range(a.files):
        if a.layout == "wide":
            parts = wide_folder(i)
        elif a.layout == "deep":
            parts = deep_folder(i)
        else:
            depth = rng.randint(1, 4)
            parts = [rng.choice(FOLDERS) + ("-%d" % rng.randint(0, 9) if d else "") for d in range(depth)]
        folder = os.path.join(a.out, *parts)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        name, text = make_file(rng, i)
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
