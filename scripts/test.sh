#!/usr/bin/env bash
# README command 2: install everything, build, then lint, type-check and run every test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
rm -f test-results.json
status=0
if command -v pnpm >/dev/null 2>&1; then pnpm test || status=$?; else npx -y pnpm@10.34.8 test || status=$?; fi
node scripts/test-summary.mjs test-results.json
exit "$status"
