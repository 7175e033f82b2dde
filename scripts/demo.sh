#!/usr/bin/env bash
# README command 1: install everything, build, and run the sandbox demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
node_modules/.bin/fs-sandbox doctor || true
node_modules/.bin/fs-sandbox demo
