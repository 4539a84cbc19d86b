#!/usr/bin/env bash
# Conversion fidelity over real corpora: adopt each into a fresh forest and
# report, per file extension, files planted and files planted with a
# suspect body (forest_convert::fidelity), with the reasons; then the
# suspect files themselves.
#   bash bench/fidelity.sh [CORPUS_DIR...]
# Default corpora: /usr/share/doc, the system's manual pages
# (/usr/share/man/man1-8, copied without the translations) and, when built,
# forests/real-corpus (bash forests/real-corpus/build.sh /tmp/real-corpus).
# Env: FOREST_BIN (else a release build), SHOW (suspect files listed, 40).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
B="$(forest_bin)"
W="$(mktemp -d /tmp/forest-fidelity.XXXX)"
trap 'rm -rf "$W"' EXIT
if [ "$#" = 0 ]; then
  mkdir -p "$W/man"
  for s in 1 2 3 4 5 6 7 8; do
    [ -d "/usr/share/man/man$s" ] && cp -r "/usr/share/man/man$s" "$W/man/"
  done
  set -- /usr/share/doc "$W/man"
  [ -d /tmp/real-corpus/files ] && set -- "$@" /tmp/real-corpus/files
fi
for c in "$@"; do
  rm -rf "$W/f"
  "$B" init "$W/f" >/dev/null
  echo "== $c"
  peak "$W/out.json" "$B" adopt --forest "$W/f" "$c" --json
  python3 - "$W/out.json" "${SHOW:-40}" <<'PY'
import collections, json, os, sys
s = json.load(open(sys.argv[1]))["sources"][0]
def ext(p):
    name = os.path.basename(p).lower()
    for comp in (".gz", ".bz2", ".xz"):
        if name.endswith(comp):
            base, e = os.path.splitext(name[: -len(comp)])
            return (e or "(none)") + comp
    return os.path.splitext(name)[1] or "(none)"
planted = len(s["planted"])
sus = s.get("suspect", [])
by = collections.Counter(ext(x["path"]) for x in sus)
reasons = collections.Counter(x["reason"] for x in sus)
print(f"files {s['files_seen']}, planted {planted}, suspect {len(sus)} "
      f"({100.0 * len(sus) / max(planted, 1):.2f}% of planted), errors {len(s['errors'])}")
print("suspect by reason:", dict(reasons.most_common()))
print("suspect by extension:", dict(by.most_common()))
for x in sus[: int(sys.argv[2])]:
    print(f"  {x['path']} ({x['converter']}): {x['reason']}: {x['message']}")
PY
done
