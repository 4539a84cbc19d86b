#!/usr/bin/env bash
# The test command (README). Expects FOREST_TEST_LLM_URL for the end-to-end
# curation tests (ops/llm/start.sh prints it); without it those tests say
# SKIPPED and the rest runs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec cargo test --workspace --locked -- --test-threads="${FOREST_TEST_THREADS:-2}"
