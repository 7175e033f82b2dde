import type { TreeProgress } from '@fs-sandbox/policy';

/** A quick operation shows nothing: the counter appears only once this much time has passed. */
const SHOW_AFTER_MS = 1_000;
/** Redraws at most this often (each one is a write to the terminal). */
const REDRAW_MS = 100;
const CLEAR_LINE = '\r\x1b[K';

interface TreeProgressDisplay {
  /** The call option, absent when stderr is not a terminal (a pipe or a file gets nothing). */
  onProgress?: (progress: TreeProgress) => void;
  /** Clears the counter line, if one was drawn. */
  finish(): void;
}

/**
 * A one-line counter on stderr for a long tree operation (`cp -r`, `rm -r`, `mv` across file
 * systems), redrawn in place: entries checked while the whole tree is vetted, then entries done of
 * that total. Only on a terminal, only after a second; cleared before the command's own output.
 */
function treeProgressDisplay(stderr: NodeJS.WritableStream, verb: string): TreeProgressDisplay {
  if ((stderr as { isTTY?: boolean }).isTTY !== true) return { finish() {} };
  const started = Date.now();
  let drawnAt = 0;
  let drawn = false;
  let total = 0;
  const count = (entries: number) => entries.toLocaleString('en-US');
  return {
    onProgress(progress) {
      if (progress.phase === 'total') {
        total = progress.entries;
        return;
      }
      const now = Date.now();
      if (now - started < SHOW_AFTER_MS || now - drawnAt < REDRAW_MS) return;
      drawnAt = now;
      drawn = true;
      const text =
        progress.phase === 'checked'
          ? `checking… ${count(progress.entries)} entries`
          : `${verb}… ${count(progress.entries)} of ${count(total)} entries`;
      stderr.write(`${CLEAR_LINE}${text}`);
    },
    finish() {
      if (drawn) stderr.write(CLEAR_LINE);
    },
  };
}

/** Runs `call` with the display's option (none off a terminal), clearing the line however it ends. */
export async function withTreeProgress<T>(
  stderr: NodeJS.WritableStream,
  verb: string,
  call: (option: { onProgress?: (progress: TreeProgress) => void }) => Promise<T>,
): Promise<T> {
  const display = treeProgressDisplay(stderr, verb);
  try {
    return await call(display.onProgress ? { onProgress: display.onProgress } : {});
  } finally {
    display.finish();
  }
}
