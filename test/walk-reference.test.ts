import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ServeProcess } from './fixtures/conformance/serve-process.js';
import { codexBinary } from './support/codex-binary.js';
import { sandboxContext, uri } from './support/pool.js';
import { startReferenceExecServer } from './support/reference-exec-server.js';

/**
 * fs/walk and fs/readDirectory, live, against the reference Codex exec-server of the pinned
 * @openai/codex, over one tree holding every kind of link (to a file, to a directory, to outside,
 * dangling, looping), a FIFO and a hidden directory. Our walk must answer exactly what the
 * reference does for every option combination, without a sandbox and under bwrap (whose view shows
 * the same tree). Directory listings compare as sets: the reference answers in readdir order, ours
 * sorted by name (docs/protocols/exec-server.md).
 */

const REFERENCE = codexBinary();

let dir: string;
let tree: string;

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-walk-reference-'));
  tree = join(dir, 'tree');
  await mkdir(join(tree, 'sub', 'deeper'), { recursive: true });
  await mkdir(join(tree, '.hidden'));
  await mkdir(join(dir, 'elsewhere'));
  await mkdir(join(dir, 'codex-home'));
  await writeFile(join(tree, 'a.txt'), 'a\n');
  await writeFile(join(tree, 'B.txt'), 'b\n');
  await writeFile(join(tree, 'sub', 'b.txt'), 'b\n');
  await writeFile(join(tree, 'sub', 'deeper', 'c.txt'), 'c\n');
  await writeFile(join(tree, '.hidden', 'h.txt'), 'h\n');
  await writeFile(join(dir, 'elsewhere', 'o.txt'), 'o\n');
  await symlink('a.txt', join(tree, 'file-link'));
  await symlink('missing', join(tree, 'dangling'));
  await symlink('sub', join(tree, 'dir-link'));
  await symlink('self', join(tree, 'self'));
  await symlink('.', join(tree, 'sub', 'loop'));
  await symlink(join(dir, 'elsewhere'), join(tree, 'outside'));
  execFileSync('mkfifo', [join(tree, 'fifo')]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Peer = 'reference' | 'ours' | 'ours under bwrap';

const OPTION_CASES: Array<Record<string, unknown>> = [
  {},
  { followDirectorySymlinks: true },
  { pruneHiddenDirectories: true },
  { followDirectorySymlinks: true, pruneHiddenDirectories: true },
  { maxDepth: 0 },
  { maxDepth: 1, followDirectorySymlinks: true },
  { maxEntries: 3 },
  { maxDirectories: 2 },
  { maxDirectories: 2, followDirectorySymlinks: true },
];

/** Each case's reply, paths relative to the tree, and each listing as a sorted set. */
async function answers(peer: Peer): Promise<Record<string, unknown>> {
  const serve =
    peer === 'reference'
      ? startReferenceExecServer(dir, join(dir, 'codex-home'))
      : ServeProcess.start([], { cwd: dir });
  const sandbox =
    peer === 'ours under bwrap' ? sandboxContext({ read: [tree, join(dir, 'elsewhere')] }) : null;
  await serve.request('initialize', { clientName: 'codex-environment' });
  serve.notify('initialized', {});
  const relative = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll(uri(tree), '<T>'));
  const result: Record<string, unknown> = {};
  for (const options of OPTION_CASES) {
    const full = {
      maxDepth: 8,
      maxDirectories: 100,
      maxEntries: 1000,
      followDirectorySymlinks: false,
      ...options,
    };
    const reply = await serve.request('fs/walk', { path: uri(tree), options: full, sandbox });
    result[`walk ${JSON.stringify(options)}`] = relative(reply.result ?? reply.error);
  }
  for (const path of [tree, join(tree, 'sub'), join(tree, 'dir-link')]) {
    const reply = await serve.request('fs/readDirectory', { path: uri(path), sandbox });
    const entries = (reply.result as { entries: Array<{ fileName: string }> }).entries;
    result[`readDirectory ${path.slice(tree.length) || '/'}`] = [...entries].sort((a, b) =>
      a.fileName < b.fileName ? -1 : 1,
    );
    if (peer !== 'reference') {
      const names = entries.map((entry) => entry.fileName);
      expect(names, 'ours is sorted by name').toEqual(
        [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
      );
    }
  }
  await serve.stop();
  return result;
}

describe.skipIf(REFERENCE === null)(
  REFERENCE === null
    ? 'fs/walk against the reference (skipped: @openai/codex ships no binary for this platform)'
    : 'fs/walk and fs/readDirectory against the reference exec-server, live',
  () => {
    it('answers every walk exactly as the reference, with and without bwrap', async () => {
      const reference = await answers('reference');
      // The reference leaves out every link it does not follow, dangling ones and links to files.
      expect(reference['walk {}']).toMatchObject({ errors: [], truncated: false });
      expect(JSON.stringify(reference['walk {}'])).not.toContain('link');
      expect(await answers('ours')).toEqual(reference);
      expect(await answers('ours under bwrap')).toEqual(reference);
    });
  },
);
