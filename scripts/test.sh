#!/usr/bin/env bash
# README command 2: install everything, build, then lint, type-check and run every test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
rm -f test-results.json test-results-node.json test-results-helper-bun.json
# setup.sh has just built everything: the suites run on that build rather than building again.
# A log that is not a terminal (CI) gets no colour codes.
[ -t 1 ] || export NO_COLOR=1 FORCE_COLOR=0
# Where setup.sh promises `fs-sandbox` on PATH (a writable link directory), a test holds it to that.
link_dir="${FS_SANDBOX_LINK_DIR:-/usr/local/bin}"
if [ -d "$link_dir" ] && [ -w "$link_dir" ]; then export FS_SANDBOX_SETUP_LINKED=1; fi
status=0
pnpm_run() { if command -v pnpm >/dev/null 2>&1; then pnpm run "$@"; else npx -y pnpm@10.34.8 run "$@"; fi; }
# Every suite runs with the default helper runtime (the Bun helper where it is built), then every
# end-to-end suite again with node helpers and the helper's unit suites under Bun, so both runtimes
# stay tested.
pnpm_run test:built || status=$?
pnpm_run test:node-helper || status=$?
pnpm_run test:helper-bun || status=$?
node scripts/test-summary.mjs test-results.json test-results-node.json test-results-helper-bun.json
exit "$status"
