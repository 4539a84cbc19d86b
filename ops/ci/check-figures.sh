#!/usr/bin/env bash
# The README's figures that go stale, held against what this CI run measured
# (ops/test.sh writes them to FOREST_TEST_SUMMARY):
#   - the test count in the README's "`ops/test.sh` with a built `target/`"
#     row ("N passed") is within 5% of the tests that passed, and the row says
#     "none skipped" only when none was;
#   - the size of the test servers ("N MB for the test servers") is within
#     15% of what they occupy in $FOREST_OPS_DIR.
# Prints what it compared; exits 1 naming the figure to update.
#   bash ops/ci/check-figures.sh SUMMARY_FILE
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
summary="${1:?usage: check-figures.sh SUMMARY_FILE (written by ops/test.sh with FOREST_TEST_SUMMARY)}"
python3 - "$summary" <<'PY'
import re
import sys

measured = dict(l.split("=", 1) for l in open(sys.argv[1]).read().split() if "=" in l)
readme = open("README.md", encoding="utf-8").read()
problems = []

row = next((l for l in readme.splitlines() if "`ops/test.sh` with a built" in l), None)
m = row and re.search(r"([\d,]+) passed", row)
if not m:
    problems.append("README.md: no '`ops/test.sh` with a built `target/`' row with 'N passed'")
else:
    said, got = int(m.group(1).replace(",", "")), int(measured.get("passed", 0))
    print(f"check-figures: README says {said} tests passed; this run passed {got}")
    if got and abs(said - got) > 0.05 * got:
        problems.append(f"README.md: the test count says {said}, this run passed {got}: update the row")
    if "none skipped" in row and int(measured.get("skipped", 0)) > 0:
        problems.append(f"README.md: says none skipped, this run skipped {measured['skipped']}")

m = re.search(r"([\d,]+) MB for the test servers", readme)
if not m:
    problems.append("README.md: no 'N MB for the test servers' figure")
else:
    said, got = int(m.group(1).replace(",", "")), int(measured.get("ops_mb", 0))
    print(f"check-figures: README says {said} MB for the test servers; they occupy {got} MB")
    if got and abs(said - got) > 0.15 * got:
        problems.append(f"README.md: the test servers' size says {said} MB, they occupy {got} MB: update it")

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
