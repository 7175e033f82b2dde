#!/usr/bin/env bash
# README command 2: install everything, build, then lint, type-check and run every test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if command -v pnpm >/dev/null 2>&1; then pnpm test; else npx -y pnpm@10.34.8 test; fi
