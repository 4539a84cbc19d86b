#!/usr/bin/env bash
# Documentation check (CI step "docs links", issue 32); no network, python3
# stdlib only.
#   (a) no file of the repository refers to the old out-of-tree spec
#       location (the sibling `shared` checkout or its `spec` folder): the
#       documentation a user needs lives in docs/;
#   (b) every relative Markdown link in README.md, ARCHITECTURE.md,
#       docs/**/*.md, ops/**/README.md and bench/README.md resolves to a file
#       or directory of the repository (as a clone has it: tracked, or new
#       and not ignored), relative to the linking file, without leaving the
#       repository. http(s)/mailto links and in-page anchors are not checked.
#   (c) sizes: README.md is at most 12,000 bytes and ARCHITECTURE.md at
#       most 30,000 bytes (a README for a user, an architecture that is a
#       map; decisions live in docs/decisions/, figures in bench/README.md);
#   (d) no lab-notebook history in README.md, ARCHITECTURE.md and
#       bench/README.md: a line that says "session" (any case) must be about
#       the product's own sessions, i.e. also say one of: MCP session,
#       Vine session, --session, --max-sessions, session heat, session_ttl,
#       close_session, session id, Mcp-Session, session.rs; and no line may say
#       "session N", "this session" or "per-session" at all (the work
#       sessions that wrote the code; their history stays in git).
# Prints `FILE: ...` per problem and exits 1; otherwise summary lines.
#   bash ops/ci/check-docs.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

rc=0
python3 - <<'PY' || rc=1
import os
import re
import sys
import subprocess
import urllib.parse

SELF = "ops/ci/check-docs.sh"
# The two forbidden spellings, assembled so that this file stays quotable.
FORBIDDEN = ["../" + "shared", "shared" + "/spec"]

files = subprocess.run(
    ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    check=True, capture_output=True,
).stdout.decode("utf-8", "surrogateescape").split("\0")
files = sorted({f for f in files if f and os.path.isfile(f)})
dirs = set()
for f in files:
    d = os.path.dirname(f)
    while d:
        dirs.add(d)
        d = os.path.dirname(d)

problems = []

# (a) references outside the repository
for f in files:
    if f == SELF:
        continue
    try:
        with open(f, "rb") as fh:
            data = fh.read()
    except OSError:
        continue
    if b"\0" in data[:8192]:
        continue  # binary
    text = data.decode("utf-8", "replace")
    for n, line in enumerate(text.splitlines(), 1):
        for bad in FORBIDDEN:
            if bad in line:
                problems.append(f"{f}:{n}: refers to '{bad}' (outside the repository; use docs/)")

# (b) Markdown links
def checked_files():
    out = []
    for f in files:
        if f in ("README.md", "ARCHITECTURE.md", "bench/README.md"):
            out.append(f)
        elif f.startswith("docs/") and f.endswith(".md"):
            out.append(f)
        elif f.startswith("ops/") and os.path.basename(f) == "README.md":
            out.append(f)
    return out

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^()\s]+(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, ...

def targets(path):
    fence = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = FENCE.match(line)
            if m:
                mark = m.group(1)
                if fence is None:
                    fence = mark
                elif mark[0] == fence[0] and len(mark) >= len(fence):
                    fence = None
                continue
            if fence is not None:
                continue
            if line.startswith("    ") or line.startswith("\t"):
                continue  # indented code block
            stripped = INLINE_CODE.sub("", line)
            for m in INLINE_LINK.finditer(stripped):
                yield m.group(1)
            m = REF_DEF.match(stripped)
            if m:
                yield m.group(1)

count = 0
for f in checked_files():
    base = os.path.dirname(f)
    for raw in targets(f):
        t = raw[1:-1] if raw.startswith("<") and raw.endswith(">") else raw
        if not t or t.startswith("#") or EXTERNAL.match(t):
            continue
        count += 1
        p = urllib.parse.unquote(t.split("#", 1)[0].split("?", 1)[0])
        rel = p.lstrip("/") if p.startswith("/") else os.path.join(base, p)
        rel = os.path.normpath(rel)
        ok = (
            rel != ".." and not rel.startswith("../") and not os.path.isabs(rel)
            and (rel == "." or rel in files or rel in dirs)
        )
        if not ok:
            problems.append(f"{f}: broken link {raw}")

for p in problems:
    print(p)
if problems:
    print(f"check-docs: {len(problems)} problem(s), {count} links checked")
    sys.exit(1)
print(f"check-docs: {count} links checked, all resolve")
PY

# (c) sizes
size_problems=0
check_size() { # FILE MAX
  local n
  n=$(wc -c <"$1")
  if [ "$n" -gt "$2" ]; then
    echo "$1: $n bytes, more than $2"
    size_problems=$((size_problems + 1))
  fi
}
check_size README.md 12000
check_size ARCHITECTURE.md 30000

# (d) "session" only in the product's sense
allowed='MCP session|Vine session|--session|--max-sessions|session heat|session_ttl|close_session|session id|Mcp-Session|session\.rs'
forbidden='session [0-9]|this session|per-session'
session_problems=0
for f in README.md ARCHITECTURE.md bench/README.md; do
  while IFS= read -r line; do
    echo "$f:$line"
    session_problems=$((session_problems + 1))
  done < <(grep -niE 'session' "$f" | grep -viE -- "$allowed" || true; grep -niE -- "$forbidden" "$f" | grep -iE -- "$allowed" || true)
done
if [ "$size_problems" -gt 0 ] || [ "$session_problems" -gt 0 ]; then
  echo "check-docs: $size_problems size problem(s), $session_problems line(s) about work sessions (see the header of $0)"
  rc=1
else
  echo "check-docs: README.md $(wc -c <README.md) of 12000 bytes, ARCHITECTURE.md $(wc -c <ARCHITECTURE.md) of 30000; no work sessions in README.md, ARCHITECTURE.md, bench/README.md"
fi
exit "$rc"
