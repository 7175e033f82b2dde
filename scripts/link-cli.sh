#!/usr/bin/env bash
# The README runs the CLI as plain `fs-sandbox`: link it onto PATH. A link of ours (or none) in
# /usr/local/bin is (re)pointed at this clone; a real file there is left alone. Without a writable
# /usr/local/bin, say the exact line that puts it on PATH instead. FS_SANDBOX_LINK_DIR overrides it
# (the tests link into a directory of their own: /usr/local/bin is shared by every clone).
set -euo pipefail
cd "$(dirname "$0")/.."
CLI="$PWD/packages/cli/bin/fs-sandbox.js"
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
