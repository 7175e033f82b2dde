#!/usr/bin/env bash
# One-time set-up shared by scripts/demo.sh and scripts/test.sh: system packages, pnpm, dependencies, build.
set -euo pipefail
cd "$(dirname "$0")/.."

PNPM_VERSION=10.34.8

# bubblewrap is the Linux sandbox; without it every restricted operation fails closed (sandbox_unavailable).
if [ "$(uname -s)" = "Linux" ] && ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo apt-get install -y -qq bubblewrap >/dev/null
  else
    echo "setup: bubblewrap (bwrap) is missing and cannot be installed without root; install it and rerun" >&2
    exit 1
  fi
fi

# corepack's signature check fails on some machines, so pnpm comes from npm, pinned.
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version)" != "$PNPM_VERSION" ]; then
  npm install -g "pnpm@$PNPM_VERSION" >/dev/null 2>&1 || true
fi
if command -v pnpm >/dev/null 2>&1 && [ "$(pnpm --version)" = "$PNPM_VERSION" ]; then
  PNPM=(pnpm)
else
  PNPM=(npx -y "pnpm@$PNPM_VERSION")
fi

"${PNPM[@]}" install --frozen-lockfile
"${PNPM[@]}" run build

bash scripts/link-cli.sh
