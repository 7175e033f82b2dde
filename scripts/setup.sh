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

# The README runs the CLI as plain `fs-sandbox`: link it onto PATH. A link of ours (or none) in
# /usr/local/bin is (re)pointed at this clone; a real file there is left alone. Without a writable
# /usr/local/bin, say the exact line that puts it on PATH instead. FS_SANDBOX_LINK_DIR overrides it.
CLI="$PWD/packages/broker/bin/fs-sandbox.js"
LINK_DIR="${FS_SANDBOX_LINK_DIR:-/usr/local/bin}"
LINK="$LINK_DIR/fs-sandbox"
if [ -e "$LINK" ] && [ ! -L "$LINK" ]; then
  echo "setup: $LINK exists and is not a link; left alone. Run this clone's CLI as $CLI" >&2
elif [ -d "$LINK_DIR" ] && [ -w "$LINK_DIR" ]; then
  ln -sfn "$CLI" "$LINK"
  echo "setup: linked $LINK -> $CLI"
else
  echo "setup: $LINK_DIR is not writable, so fs-sandbox is not on PATH; add it with:" >&2
  echo "  export PATH=\"$PWD/node_modules/.bin:\$PATH\"" >&2
fi
