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

# peak OUT COMMAND... : run COMMAND with stdout in OUT and stderr in
# OUT.err, poll its VmHWM every 50 ms and print "W s, peak RSS M MiB".
# A failing command prints "(exited N)" first and does not stop the bench.
peak() {
  local out="$1" start end pk=0 pid r
  shift
  start=$(date +%s.%N)
  "$@" >"$out" 2>"$out.err" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    r=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null || echo 0)
    [ -n "$r" ] && [ "$r" -gt "$pk" ] && pk=$r
    sleep 0.05
  done
  wait "$pid" || echo "(exited $?)"
  end=$(date +%s.%N)
  python3 -c "print(f'{$end-$start:.2f} s, peak RSS {$pk/1024:.1f} MiB')"
}
