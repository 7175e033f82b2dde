import { describe, expect, it } from 'vitest';
import { rehearse } from '../src/warm-up.js';
import { isLinux } from './support/helper-run.js';

describe('the warm-up rehearsal', () => {
  it.skipIf(!isLinux)(
    'runs both operations past their params, as the broker shapes a request (Linux only: it reads procfs)',
    async () => {
      const [metadata, read] = await rehearse(['/']);
      expect(metadata?.status === 'ok' && metadata.payload.response).toMatchObject({ isDirectory: true });
      // The read reaches the file (a procfs file is refused by the regular-file check), not a param check.
      expect(read?.status === 'error' && read.payload.data.errorKind).not.toBe('invalid_params');
      expect(read?.status === 'error' && read.payload.message).toContain('/proc/self/stat');
    },
  );

  it('gives up quietly when its own mount check fails', async () => {
    expect(await rehearse(['/definitely/not/a/mount/point'])).toEqual([]);
  });
});
