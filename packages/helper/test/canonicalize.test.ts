import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectKind, fails, isLinux, ok, symlinkAt, tempDir, uri } from './support/helper-run.js';

describe('fs/canonicalize', () => {
  it('resolves symlinks and `..` to the physical path, as a file URI', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'real', 'sub'), { recursive: true });
    writeFileSync(join(dir, 'real', 'sub', 'f'), 'x');
    symlinkAt('real/sub', join(dir, 'alias'));
    const { response } = await ok('fs/canonicalize', { path: `${uri(join(dir, 'alias'))}/f` });
    expect(response).toEqual({ path: uri(join(dir, 'real', 'sub', 'f')) });
  });

  it('requires the path to exist', async () => {
    const dir = tempDir();
    expectKind(await fails('fs/canonicalize', { path: uri(join(dir, 'nope')) }), 'not_found', -32004);
  });

  it.skipIf(!isLinux)(
    'keeps a name that is not UTF-8 exactly, percent-encoded in the URI (Linux only)',
    async () => {
      const dir = tempDir();
      const name = Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9]), Buffer.from('.txt')]);
      writeFileSync(name, 'latin-1 name');
      const { response } = await ok('fs/canonicalize', { path: `${uri(dir)}/caf%E9.txt` });
      expect(response).toEqual({ path: `${uri(dir)}/caf%E9.txt` });
    },
  );
});
