#!/usr/bin/env bash
# The README runs the CLI as plain `fs-sandbox`: link it onto PATH, in /usr/local/bin, which every
# clone on the machine shares. So the link is made only where there is none, or where it already
# points at this clone (then it is left as it is); another clone's link, a link elsewhere or a real
# file is left alone, with the way to run this clone's CLI instead. A link whose target is gone
# (a deleted clone) is replaced. Each run says what it did. Without a writable /usr/local/bin, it
# says the exact line that puts the CLI on PATH instead. FS_SANDBOX_LINK_DIR overrides the
# directory (the tests link into one of their own).
set -euo pipefail
cd "$(dirname "$0")/.."
CLI="$PWD/packages/cli/bin/fs-sandbox.js"
LINK_DIR="${FS_SANDBOX_LINK_DIR:-/usr/local/bin}"
LINK="$LINK_DIR/fs-sandbox"
ON_PATH="  export PATH=\"$PWD/node_modules/.bin:\$PATH\""
if [ -L "$LINK" ] && [ "$(readlink -f "$LINK")" = "$(readlink -f "$CLI")" ]; then
  echo "setup: $LINK already links to this clone ($CLI); left as it is"
elif [ -L "$LINK" ] && [ -e "$LINK" ]; then
  echo "setup: $LINK links to $(readlink "$LINK"), not to this clone; left alone. Run this clone's CLI as $CLI, or put it first on PATH with:" >&2
  echo "$ON_PATH" >&2
elif [ -e "$LINK" ]; then
  echo "setup: $LINK exists and is not a link; left alone. Run this clone's CLI as $CLI" >&2
elif [ -d "$LINK_DIR" ] && [ -w "$LINK_DIR" ]; then
  if [ -L "$LINK" ]; then
    echo "setup: $LINK linked to $(readlink "$LINK"), which is gone; replacing it"
  fi
  ln -sfn "$CLI" "$LINK"
  echo "setup: linked $LINK -> $CLI"
else
  echo "setup: $LINK_DIR is not writable, so fs-sandbox is not on PATH; add it with:" >&2
  echo "$ON_PATH" >&2
fi
