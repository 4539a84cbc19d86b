#!/usr/bin/env python3
"""Rebuild the findability corpora and their question sets (issue 26).

    python3 bench/findability/build_sets.py OUT_DIR

Writes, per corpus, OUT_DIR/<corpus>/src/ (the drive to adopt),
OUT_DIR/<corpus>/questions.json and OUT_DIR/<corpus>/PROVENANCE.tsv.

The questions were written by people outside this team about real files:
- `usd`: this machine's /usr/share/doc (symlinks dropped). One question per
  installed package whose doc folder is a real directory holding something
  besides `copyright` and changelogs: the package's one-line Debian
  description (`dpkg-query ${binary:Summary}`), written by its maintainer.
  Target: the package's folder (or any file in it).
- `py`: the Python distributions installed in /tmp/forest-ops/*-venv
  (site-packages layout, the first venv holding a distribution wins). One
  question per distribution: the `Summary:` its authors wrote in
  `*.dist-info/METADATA`. The forest gets the files the distribution's RECORD
  lists, *without* any `*.dist-info/` folder (so neither METADATA nor the
  long description reaches the scent), bytecode or shared objects.
  Target: the distribution's top-level packages/modules.

- `man` (held out: never used to choose a default): every 12th page of
  this machine's /usr/share/man/man1 (sorted by file name), rendered to
  text by man(1) at 80 columns, *without* its NAME section. One question
  per every 5th page of those: the one-line description its authors wrote
  in NAME (the words after " - "), when it has at least three words.
  Target: the page's file.

Neither the package database, METADATA nor a page's NAME line is copied
into a corpus: they create questions only, never scent.

    python3 bench/findability/build_sets.py OUT_DIR [usd] [py] [man]   (default: all three)
"""
import csv
import glob
import json
import os
import re
import shutil
import subprocess
import sys

SKIP_EXT = (".pyc", ".so", ".pth", ".exe", ".dll", ".dylib")


def write_set(out, name, questions, prov_rows):
    d = os.path.join(out, name)
    with open(os.path.join(d, "questions.json"), "w") as f:
        json.dump(questions, f, indent=1, ensure_ascii=False)
    with open(os.path.join(d, "PROVENANCE.tsv"), "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["question_id", "question_source", "target", "corpus_source"])
        w.writerows(prov_rows)
    print(f"{name}: {len(questions)} questions, src {d}/src", file=sys.stderr)


def build_usd(out, root="/usr/share/doc"):
    src = os.path.join(out, "usd", "src")
    shutil.rmtree(os.path.join(out, "usd"), ignore_errors=True)
    # Copy without following symlinks, then drop them (a drive copy keeps files).
    shutil.copytree(root, src, symlinks=True)
    for dp, dns, fns in os.walk(src):
        for n in dns + fns:
            p = os.path.join(dp, n)
            if os.path.islink(p):
                os.unlink(p)
    q = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Version}\t${binary:Summary}\n"],
                       check=True, capture_output=True, text=True).stdout
    questions, prov = [], []
    for line in sorted(set(q.splitlines())):
        pkg, ver, summary = (line.split("\t") + ["", ""])[:3]
        d = os.path.join(src, pkg)
        if not summary.strip() or not os.path.isdir(d):
            continue
        content = [f for _, _, fs in os.walk(d) for f in fs
                   if f != "copyright" and not f.startswith("changelog")]
        if not content:
            continue
        qid = f"usd-{pkg}"
        questions.append({"id": qid, "question": summary.strip(), "targets": [pkg]})
        prov.append([qid, f"dpkg-query binary:Summary of {pkg} {ver}", pkg, f"{root}/{pkg}"])
    write_set(out, "usd", questions, prov)


def dist_metadata(di):
    name = summary = version = ""
    with open(os.path.join(di, "METADATA"), encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                break  # headers end at the first blank line
            k, _, v = line.partition(":")
            if k == "Name":
                name = v.strip()
            elif k == "Summary":
                summary = v.strip()
            elif k == "Version":
                version = v.strip()
    return name, version, summary


def build_py(out, pattern="/tmp/forest-ops/*-venv/lib/python3.11/site-packages"):
    src = os.path.join(out, "py", "src")
    shutil.rmtree(os.path.join(out, "py"), ignore_errors=True)
    os.makedirs(src)
    seen, questions, prov = set(), [], []
    for sp in sorted(glob.glob(pattern)):
        for di in sorted(glob.glob(os.path.join(sp, "*.dist-info"))):
            if not os.path.exists(os.path.join(di, "METADATA")) or not os.path.exists(os.path.join(di, "RECORD")):
                continue
            name, ver, summary = dist_metadata(di)
            key = name.lower().replace("_", "-")
            if not name or key in seen:
                continue
            seen.add(key)
            tops = set()
            with open(os.path.join(di, "RECORD"), encoding="utf-8") as f:
                for row in csv.reader(f):
                    rel = row[0] if row else ""
                    if (not rel or rel.startswith("..") or rel.startswith("/") or ".dist-info/" in rel
                            or "__pycache__" in rel or rel.endswith(SKIP_EXT)):
                        continue
                    a = os.path.join(sp, rel)
                    if not os.path.isfile(a):
                        continue
                    os.makedirs(os.path.dirname(os.path.join(src, rel)) or src, exist_ok=True)
                    shutil.copyfile(a, os.path.join(src, rel))
                    tops.add(rel.split("/")[0])
            if not summary or not tops:
                continue
            qid = f"py-{key}"
            questions.append({"id": qid, "question": summary, "targets": sorted(tops)})
            prov.append([qid, f"METADATA Summary of {name} {ver}", " ".join(sorted(tops)), di])
    # Two distributions sharing a top-level folder: each targets only its own files' folders.
    write_set(out, "py", questions, prov)


def render_man(path):
    env = {**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": "0", "LC_ALL": "C.UTF-8"}
    r = subprocess.run(["man", "-l", "-P", "cat", path], capture_output=True, text=True, env=env, timeout=60)
    # man(1) overstrikes bold and underline ("X\bX", "_\bX"), as col -b would not keep
    return re.sub(".\x08", "", r.stdout) if r.returncode == 0 else ""


def split_name(text):
    """(description from NAME, the text without its NAME section)."""
    lines = text.splitlines()
    out, desc, i = [], "", 0
    while i < len(lines):
        if lines[i].strip() == "NAME":
            j = i + 1
            body = []
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith(" ")):
                body.append(lines[j].strip())
                j += 1
            name_line = " ".join(b for b in body if b)
            if " - " in name_line:
                desc = name_line.split(" - ", 1)[1].strip()
            i = j
            continue
        out.append(lines[i])
        i += 1
    return desc, "\n".join(out)


def build_man(out, root="/usr/share/man/man1", every=12, ask_every=5):
    src = os.path.join(out, "man", "src", "man1")
    shutil.rmtree(os.path.join(out, "man"), ignore_errors=True)
    os.makedirs(src)
    pages = sorted(f for f in os.listdir(root) if not os.path.islink(os.path.join(root, f)))[::every]
    questions, prov = [], []
    for n, f in enumerate(pages):
        desc, text = split_name(render_man(os.path.join(root, f)))
        if len(text.split()) < 20:
            continue
        name = f[:-3] if f.endswith(".gz") else f
        rel = f"man1/{name}.txt"
        with open(os.path.join(out, "man", "src", rel), "w") as fh:
            fh.write(text)
        if n % ask_every == 0 and len(desc.split()) >= 3:
            qid = f"man-{name}"
            questions.append({"id": qid, "question": desc, "targets": [rel]})
            prov.append([qid, f"NAME line of {root}/{f}", rel, f"{root}/{f}"])
    write_set(out, "man", questions, prov)


if __name__ == "__main__":
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "/tmp/findability")
    which = sys.argv[2:] or ["usd", "py", "man"]
    os.makedirs(out, exist_ok=True)
    for name in which:
        {"usd": build_usd, "py": build_py, "man": build_man}[name](out)
