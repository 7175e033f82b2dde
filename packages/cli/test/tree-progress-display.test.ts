import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { withTreeProgress } from '../src/cli/tree-progress-display.js';

/** A stderr that records what is written to it, a terminal or not. */
function terminal(isTTY: boolean) {
  let written = '';
  const stream = {
    isTTY,
    write(chunk: string) {
      written += chunk;
      return true;
    },
  } as unknown as NodeJS.WritableStream;
  return { stream, written: () => written };
}

describe('the tree progress counter of the CLI', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(0);
  });
  afterEach(() => vi.useRealTimers());

  it('shows nothing for the first second, then entries checked and done of the total, then clears', async () => {
    const tty = terminal(true);
    await withTreeProgress(tty.stream, 'removing', async ({ onProgress }) => {
      expect(onProgress).toBeDefined();
      onProgress?.({ phase: 'checked', entries: 10 });
      vi.setSystemTime(1_500);
      onProgress?.({ phase: 'checked', entries: 4_000 });
      onProgress?.({ phase: 'total', entries: 5_000 });
      vi.setSystemTime(1_550);
      onProgress?.({ phase: 'done', entries: 100 });
      vi.setSystemTime(1_700);
      onProgress?.({ phase: 'done', entries: 2_500 });
    });
    expect(tty.written()).toBe(
      '\r\x1b[Kchecking… 4,000 entries\r\x1b[Kremoving… 2,500 of 5,000 entries\r\x1b[K',
    );
  });

  it('gives no progress option and writes nothing off a terminal, even when the call fails', async () => {
    const pipe = terminal(false);
    await expect(
      withTreeProgress(pipe.stream, 'copying', async (option) => {
        expect(option).toEqual({});
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(pipe.written()).toBe('');
  });

  it('clears a drawn line when the call fails', async () => {
    const tty = terminal(true);
    await expect(
      withTreeProgress(tty.stream, 'copying', async ({ onProgress }) => {
        vi.setSystemTime(2_000);
        onProgress?.({ phase: 'checked', entries: 7 });
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(tty.written()).toBe('\r\x1b[Kchecking… 7 entries\r\x1b[K');
  });
});
