# Shared helpers of the bench scripts (source it from the repository root).

# The `forest` binary to measure: $FOREST_BIN when set (nothing is built),
# else a fresh release build of forest-cli.
forest_bin() {
  if [ -z "${FOREST_BIN:-}" ]; then
    cargo build --release -q -p forest-cli >&2
    FOREST_BIN="$PWD/target/release/forest"
  fi
  echo "$FOREST_BIN"
}

# polled OUT COMMAND... : run COMMAND with stdout in OUT and stderr in
# OUT.err, polling its VmHWM every 50 ms; sets POLL_START and POLL_END
# (epoch seconds) and POLL_PEAK_KB, and returns COMMAND's exit code.
polled() {
  local out="$1" pid r rc=0
  shift
  POLL_PEAK_KB=0
  POLL_START=$(date +%s.%N)
  "$@" >"$out" 2>"$out.err" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    r=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null || echo 0)
    [ -n "$r" ] && [ "$r" -gt "$POLL_PEAK_KB" ] && POLL_PEAK_KB=$r
    sleep 0.05
  done
  wait "$pid" || rc=$?
  POLL_END=$(date +%s.%N)
  return "$rc"
}

# peak OUT COMMAND... : `polled`, then print "W s, peak RSS M MiB".
# A failing command prints "(exited N)" first and does not stop the bench.
peak() {
  local rc=0
  polled "$@" || rc=$?
  [ "$rc" = 0 ] || echo "(exited $rc)"
  python3 -c "print(f'{$POLL_END-$POLL_START:.2f} s, peak RSS {$POLL_PEAK_KB/1024:.1f} MiB')"
}

# curator_docs W CORPUS BIN N: the first N documents of
# bench/curator-input.list (forests/real-corpus built at CORPUS), each in its
# own folder under W/src, and the same as Markdown under W/md (the bodies of
# BIN's uncurated adopt, W/plain): the input both engines convert (issue 35).
curator_docs() {
  local w=$1 corpus=$2 bin=$3 n=$4 i=0 p d
  while read -r p; do
    i=$((i + 1)); d="$w/src/$(printf %02d "$i")"; mkdir -p "$d"; cp "$corpus/files/$p" "$d/"
  done < <(grep -v '^#' "$(dirname "${BASH_SOURCE[0]}")/curator-input.list" | head -n "$n")
  "$bin" init "$w/plain" --title Bench >/dev/null
  "$bin" adopt --forest "$w/plain" "$w/src" --json >/dev/null
  python3 - "$w/plain" "$w/md" <<'PY'
import pathlib, sys
src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for p in sorted(src.glob("[0-9][0-9]/*.md")):
    if p.name == "_index.md":
        continue
    text = p.read_text()
    body = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text
    (out / p.parent.name).mkdir(parents=True, exist_ok=True)
    (out / p.parent.name / p.name).write_text(body.lstrip("\n"))
PY
}
