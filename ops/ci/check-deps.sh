#!/usr/bin/env bash
# The dependency invariants of ARCHITECTURE.md, checked on the resolved
# graph (all edges: normal, build and dev): the read side (forest-vine)
# links neither the ingest pipeline nor the converters nor the curator, and
# the on-disk layer (forest-derived) depends on no pipeline; the Ranger
# links neither the Gardener nor the converters nor the curator; no crate
# depends on the binary; the test kit is a dev-dependency only.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
fail=0
# forbid CRATE DEP...: fail when CRATE's dependency tree contains a DEP.
forbid() {
  local crate="$1" tree dep
  shift
  tree="$(cargo tree --locked -q -p "$crate" --prefix none -e normal,build,dev)"
  for dep in "$@"; do
    if grep -q "^$dep v" <<<"$tree"; then
      echo "check-deps: $crate depends on $dep (see ARCHITECTURE.md, Invariants)" >&2
      cargo tree --locked -q -p "$crate" -e normal,build,dev -i "$dep" >&2 || true
      fail=1
    fi
  done
}
forbid forest-vine forest-gardener forest-convert forest-curator forest-ranger forest-prepared
forbid forest-derived forest-gardener forest-convert forest-curator forest-ranger forest-vine
forbid forest-catalog forest-gardener forest-convert forest-vine forest-canopy
forbid forest-navigator forest-gardener forest-convert forest-ranger forest-prepared
forbid forest-vine forest-navigator
forbid forest-canopy forest-gardener forest-convert forest-curator forest-ranger forest-prepared forest-vine forest-derived
# forest-keyphrase stands alone: no forest-* crate in its tree.
if cargo tree --locked -q -p forest-keyphrase --prefix none -e normal,build,dev | grep -v '^forest-keyphrase v' | grep -q '^forest-'; then
  echo "check-deps: forest-keyphrase depends on a forest-* crate (see ARCHITECTURE.md, Invariants)" >&2
  fail=1
fi
# The web console is read side only: never the ingest pipeline, the
# converters, the curator, the Ranger or the agent.
forbid forest-console forest-gardener forest-convert forest-curator forest-ranger forest-prepared forest-navigator
forbid forest-vine forest-console
forbid forest-ranger forest-gardener forest-convert forest-curator forest-vine forest-navigator
# nobody CRATE EDGES: fail when any other workspace member's tree over EDGES
# contains CRATE.
nobody() {
  local crate="$1" edges="$2" tree
  tree="$(cargo tree --locked -q --workspace --exclude "$crate" --prefix none -e "$edges")"
  if grep -q "^$crate v" <<<"$tree"; then
    echo "check-deps: a workspace crate depends on $crate over $edges edges (see ARCHITECTURE.md, Invariants)" >&2
    cargo tree --locked -q --workspace -e "$edges" -i "$crate" >&2 || true
    fail=1
  fi
}
nobody forest-cli normal,build,dev
nobody forest-testkit normal,build
# One locate: only forest-catalog ranks (reads the FTS5 index) in library
# code; tests may look at it.
ranking="$(grep -rln --include=*.rs "nodes_fts" crates converters pipelines |
  grep -v '^crates/forest-catalog/' | grep -v '/tests/' || true)"
if [ -n "$ranking" ]; then
  echo "check-deps: only forest-catalog may read nodes_fts (one locate); found in:" >&2
  echo "$ranking" >&2
  fail=1
fi
# No SQL over the catalog's tables outside forest-catalog: library code
# reaches the catalog's connection only there (tests, examples and benches
# may look).
sqlers="$(grep -rln --include=*.rs '\.connection()' crates converters pipelines |
  grep -v '^crates/forest-catalog/' | grep -v -e '/tests/' -e '/examples/' -e '/benches/' || true)"
if [ -n "$sqlers" ]; then
  echo "check-deps: only forest-catalog may query the catalog (add a method there); found in:" >&2
  echo "$sqlers" >&2
  fail=1
fi
# The Vine speaks JSON only at its MCP edge (ARCHITECTURE.md, The Vine's
# MCP edge): below it no primitive takes a JSON object (`Map<String,
# Value>`, `serde_json::Map`) and no answer is built with `json!` (an
# `IndexMap` of extra frontmatter keys is allowed: see forest-vine's specs.rs). Test modules (from `#[cfg(test)]` on) and
# tests/ may use both.
vine_edge="access.rs args.rs dispatch.rs error.rs http.rs mcp.rs pool.rs scoped.rs tools.rs"
json_below="$(for f in crates/forest-vine/src/*.rs crates/forest-vine/src/*/*.rs; do
  [[ " $vine_edge " == *" ${f#crates/forest-vine/src/} "* ]] && continue
  awk -v f="$f" '/^#\[cfg\(test\)\]/ { exit } /json!|(^|[^A-Za-z_])Map<String, Value>|serde_json::Map/ { print f ":" FNR ": " $0 }' "$f"
done)"
if [ -n "$json_below" ]; then
  echo "check-deps: json!/Map<String, Value> below the Vine's MCP edge (type the arguments or the answer):" >&2
  echo "$json_below" >&2
  fail=1
fi
# No `Result<_, String>` in library code: a library's errors are typed
# (thiserror); the CLI (the binary edge) and tests may use strings.
stringly="$(grep -rn --include=*.rs "Result<[^;]*, String>" crates pipelines converters |
  grep -v -e '/tests/' -e '^crates/forest-cli/' || true)"
if [ -n "$stringly" ]; then
  echo "check-deps: a library returns Result<_, String> (give it a thiserror type):" >&2
  echo "$stringly" >&2
  fail=1
fi
# No import circle inside a crate (file graph of `crate::`/`super::` paths,
# following re-exports; see check-cycles.py).
cycle_crates=()
for d in crates/* pipelines/* converters/*; do
  [ -f "$d/src/lib.rs" ] || [ -f "$d/src/main.rs" ] && cycle_crates+=("$d")
done
python3 ops/ci/check-cycles.py "${cycle_crates[@]}" || fail=1
[ "$fail" = 0 ] && echo "check-deps: the FTS index and the catalog's tables are read by forest-catalog alone;"
[ "$fail" = 0 ] && echo "check-deps: forest-vine, forest-console, forest-derived, forest-catalog, forest-navigator, forest-canopy, forest-keyphrase and forest-ranger keep their dependency invariants;"
[ "$fail" = 0 ] && echo "check-deps: no json! or Map<String, Value> below the Vine's MCP edge;"
[ "$fail" = 0 ] && echo "check-deps: no crate depends on forest-cli, and forest-testkit is a dev-dependency only;"
[ "$fail" = 0 ] && echo "check-deps: no library returns Result<_, String>"
exit "$fail"
