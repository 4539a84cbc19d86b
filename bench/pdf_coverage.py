"""PDF word coverage of forest-convert against pdftotext, word-weighted.

Usage: python3 bench/pdf_coverage.py FILES_DIR PER_FILE_TSV BODIES_DIR
coverage = sum over PDFs of min(count_ours(w), count_ref(w)) / sum of count_ref(w),
words = runs of >= 2 word characters, lowercased. Also prints pages/s of both.
Lists PDFs pdftotext reads (>= 20 words) that we planted without text.
"""
import collections, os, re, subprocess, sys, time

root, tsv, bodies = sys.argv[1:4]
rows = [l.rstrip("\n").split("\t") for l in open(tsv) if l.startswith("pdf\t")]
words = lambda t: collections.Counter(w.lower() for w in re.findall(r"\w{2,}", t))
tot = hit = pages = 0
t_ref = 0.0
t_ours = sum(int(r[4]) for r in rows) / 1e6
lost = []
for r in rows:
    status, rel = r[1], r[5]
    path = os.path.join(root, rel)
    t0 = time.time()
    ref = subprocess.run(["pdftotext", "-q", path, "-"], capture_output=True).stdout.decode("utf-8", "replace")
    t_ref += time.time() - t0
    info = subprocess.run(["pdfinfo", path], capture_output=True).stdout.decode("utf-8", "replace")
    m = re.search(r"Pages:\s+(\d+)", info)
    pages += int(m.group(1)) if m else 0
    rc = words(ref)
    n = sum(rc.values())
    if n == 0:
        continue
    body = os.path.join(bodies, rel + ".md")
    oc = words(open(body, encoding="utf-8", errors="replace").read()) if os.path.exists(body) else collections.Counter()
    h = sum(min(c, oc[w]) for w, c in rc.items())
    tot += n
    hit += h
    if n >= 20 and h / n < 0.5:
        lost.append((rel, status, r[6] if len(r) > 6 else "", round(h / n, 3), n))
print(f"pdfs={len(rows)} pages={pages} ref_words={tot} coverage={hit / max(tot, 1):.4f}")
print(f"ours: {pages / max(t_ours, 1e-9):.1f} pages/s; pdftotext: {pages / max(t_ref, 1e-9):.1f} pages/s")
for l in sorted(lost, key=lambda x: -x[4]):
    print("low coverage:", *l, sep="\t")
