import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { rehearse } from '../src/warm-up.js';
import { isLinux } from './support/helper-run.js';

describe('the warm-up rehearsal', () => {
  it.skipIf(!isLinux)(
    'runs both operations to the end, as the broker shapes a request: the read returns the bytes of a real file',
    async () => {
      const [metadata, read] = await rehearse(['/']);
      expect(metadata?.status === 'ok' && metadata.payload.response).toMatchObject({ isDirectory: true });
      // The whole read path ran (guard, open, checks, read): its reply carries the file's bytes.
      expect(read?.status).toBe('ok');
      expect(read?.status === 'ok' && read.binary?.data).toEqual(readFileSync('/etc/passwd'));
    },
  );

  it('gives up quietly when its own mount check fails', async () => {
    expect(await rehearse(['/definitely/not/a/mount/point'])).toEqual([]);
  });
});
