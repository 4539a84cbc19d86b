#!/usr/bin/env bash
# Structure of an uncurated adopt of a real drive (issue 26): how deep the
# leaves sit and whether every branch summary names content.
#   bash bench/structure.sh [CORPUS_DIR]     (default: /usr/share/doc)
# Checks, each printed with its figures (exit 1 when one fails):
# - no leaf deeper than its source folder's depth + 2 bucket levels;
# - every branch summary names content: a word of its children's names,
#   titles or summaries that is not a word of the folder's own name, and
#   none of the placeholders ("Documents adopted from source folder ...");
# - `forest validate` 0 errors, `forest health` no needs_split, and the
#   reference engine's `vine validate` 0 errors when $FOREST_TEST_MONKEYLLM
#   names its bin directory.
# Env: FOREST_BIN (else a release build).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
SRC="${1:-/usr/share/doc}"
W="$(mktemp -d /tmp/forest-structure.XXXX)"
trap 'rm -rf "$W"' EXIT

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$B" init "$W/f" >/dev/null
printf 'adopt %s: ' "$SRC"
peak "$W/adopt.json" "$B" adopt --forest "$W/f" "$SRC" --json
"$B" validate --forest "$W/f" | tail -1
"$B" health --forest "$W/f" --json >"$W/health.json" || true
if [ -n "${FOREST_TEST_MONKEYLLM:-}" ] && [ -x "$FOREST_TEST_MONKEYLLM/vine" ]; then
  printf 'vine validate: '
  "$FOREST_TEST_MONKEYLLM/vine" validate --forest "$W/f" | tail -1
fi
python3 - "$W/f" "$W/health.json" <<'PY'
import collections, json, os, re, sys
root, health = sys.argv[1], json.load(open(sys.argv[2]))

def front(path):
    text = open(path, encoding="utf-8").read()
    head, _, body = text[4:].partition("\n---\n")
    meta = {}
    for line in head.splitlines():
        m = re.match(r"^([a-z_]+): (.*)$", line)
        if m:
            v = m.group(2).strip()
            if len(v) > 1 and v[0] == v[-1] and v[0] in "'\"":
                v = v[1:-1].replace("''", "'")
            meta[m.group(1)] = v
    return meta, body

def words(s):
    return {w for w in re.split(r"[^a-z0-9+#]+", s.lower()) if len(w) >= 3 and re.search(r"[a-z]", w)}

FILLER = words("names to more themes holds sub-branches by name the and for with")
PLACEHOLDERS = ("Documents adopted from source folder", "Files and folders of ", "Region '")
leaves, branches, bad_depth, bad_scent = 0, 0, [], []
widest, master_lines = 0, 0
levels = collections.Counter()
extra = collections.Counter()
for d, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if x not in (".git", "_derived", "_meta")]
    for fn in files:
        if not fn.endswith(".md"):
            continue
        p = os.path.join(d, fn)
        rel = os.path.relpath(p, root)[:-3]
        meta, body = front(p)
        comps = rel.split("/")
        if fn == "_index.md":
            lines = sum(1 for l in body.splitlines() if l.startswith("- [["))
            if rel == "_index":
                master_lines = lines
                continue  # the master keeps the summary `init` wrote
            widest = max(widest, lines)
            branches += 1
            s = meta.get("summary", "")
            folder = [c for c in comps[:-1] if not c.startswith("~")]
            own = words(" ".join(folder[-1:]))
            kids = set()
            for line in body.splitlines():
                m = re.match(r"^- \[\[([^\]]+)\]\](?: — (.*))?$", line)
                if m:
                    kids |= words(m.group(1).split("/")[-2 if m.group(1).endswith("_index") else -1])
                    kids |= words(m.group(2) or "")
                    child = os.path.join(root, m.group(1) + ".md")
                    if os.path.exists(child):
                        kids |= words(front(child)[0].get("title", ""))
            named = (words(s) - own - FILLER) & kids
            if s.startswith(PLACEHOLDERS) or not named:
                bad_scent.append((rel, s))
            continue
        sp = meta.get("source_path")
        if not sp:
            continue
        leaves += 1
        buckets = sum(1 for c in comps[:-1] if c.startswith("~"))
        levels[buckets] += 1
        over = len(comps) - 1 - sp.count("/")
        extra[over] += 1
        if buckets > 2 or over > 2:
            bad_depth.append(rel)
print(f"{leaves} leaves, {branches} branches; leaves by bucket levels above them: {dict(sorted(levels.items()))}")
print(f"leaves by depth beyond their folder's: {dict(sorted(extra.items()))}")
print(f"master lists {master_lines} entries; widest branch {widest} entries; needs_split: {len(health.get('needs_split', []))}")
print(f"leaves deeper than folder + 2 bucket levels: {len(bad_depth)}", *bad_depth[:5], sep="\n  ")
print(f"branch summaries that name no content: {len(bad_scent)}/{branches}")
for rel, s in bad_scent[:10]:
    print(f"  {rel}: {s}")
ok = not bad_depth and not bad_scent and not health.get("needs_split")
print("structure: ok" if ok else "structure: FAILED")
sys.exit(0 if ok else 1)
PY
