#!/usr/bin/env bash
# README command 2: install everything, build, then lint, type-check and run every test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
rm -f test-results.json test-results-helper-bun.json
# setup.sh has just built everything: the suites run on that build rather than building again.
# A log that is not a terminal (CI) gets no colour codes.
[ -t 1 ] || export NO_COLOR=1 FORCE_COLOR=0
status=0
pnpm_run() { if command -v pnpm >/dev/null 2>&1; then pnpm run "$@"; else npx -y pnpm@10.34.8 run "$@"; fi; }
# One vitest run: the unit project, every end-to-end file once with the default helper runtime (the
# Bun helper where it is built) and the runtime-sensitive ones again with node helpers (the e2e-node
# project, test/support/suite-plan.ts); then the helper's unit suites under Bun itself.
pnpm_run test:built || status=$?
pnpm_run test:helper-bun || status=$?
node scripts/test-summary.mjs test-results.json test-results-helper-bun.json
exit "$status"
