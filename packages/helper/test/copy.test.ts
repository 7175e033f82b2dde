import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  call,
  expectKind,
  fails,
  inspectDeepTree,
  isLinux,
  isPosix,
  makeDeepTree,
  mkfifo,
  ok,
  RESTRICTED_SANDBOX,
  symlinkAt,
  tempDir,
  tempLeftovers,
  uri,
  writableGuard,
} from './support/helper-run.js';

function copyParams(
  source: string,
  destination: string,
  recursive: boolean,
  extra: Record<string, unknown> = {},
) {
  return { sourcePath: uri(source), destinationPath: uri(destination), recursive, ...extra };
}

describe('fs/copy', () => {
  it('copies a regular file with its mode, replacing an existing destination', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'src'), 'content');
    if (isPosix) chmodSync(join(dir, 'src'), 0o750);
    writeFileSync(join(dir, 'dst'), 'old');
    await ok('fs/copy', copyParams(join(dir, 'src'), join(dir, 'dst'), false));
    expect(readFileSync(join(dir, 'dst'), 'utf8')).toBe('content');
    if (isPosix) expect(statSync(join(dir, 'dst')).mode & 0o777).toBe(0o750);
    expect(tempLeftovers(dir)).toEqual([]);
  });

  it('requires `recursive`', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'src'), 'x');
    const error = await fails('fs/copy', {
      sourcePath: uri(join(dir, 'src')),
      destinationPath: uri(join(dir, 'dst')),
    });
    expectKind(error, 'invalid_params', -32602);
    expect(error.message).toBe('missing field `recursive`');
  });

  it('refuses a directory without recursive, with the reference message', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'src'));
    const error = await fails('fs/copy', copyParams(join(dir, 'src'), join(dir, 'dst'), false));
    expectKind(error, 'invalid_request', -32600);
    expect(error.message).toBe('fs/copy requires recursive: true when sourcePath is a directory');
    expect(existsSync(join(dir, 'dst'))).toBe(false);
  });

  it('copies a tree, keeping symlinks as links and skipping FIFOs', async () => {
    const dir = tempDir();
    const src = join(dir, 'src');
    mkdirSync(join(src, 'a', 'b'), { recursive: true });
    writeFileSync(join(src, 'top.txt'), 'top');
    writeFileSync(join(src, 'a', 'b', 'deep.txt'), 'deep');
    symlinkAt('../top.txt', join(src, 'a', 'rel-link'));
    symlinkAt('/nonexistent/target', join(src, 'dangling'));
    if (isPosix) mkfifo(join(src, 'a', 'pipe'));
    await ok('fs/copy', copyParams(src, join(dir, 'dst'), true));
    const dst = join(dir, 'dst');
    expect(readFileSync(join(dst, 'top.txt'), 'utf8')).toBe('top');
    expect(readFileSync(join(dst, 'a', 'b', 'deep.txt'), 'utf8')).toBe('deep');
    expect(readlinkSync(join(dst, 'a', 'rel-link'))).toBe('../top.txt');
    expect(readlinkSync(join(dst, 'dangling'))).toBe('/nonexistent/target');
    expect(existsSync(join(dst, 'a', 'pipe'))).toBe(false);
    expect(readdirSync(join(dst, 'a')).sort()).toEqual(['b', 'rel-link']);
  });

  it('copies a symlink source as a link, never following it', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'target-dir'));
    symlinkAt('target-dir', join(dir, 'link'));
    await ok('fs/copy', copyParams(join(dir, 'link'), join(dir, 'copy'), false));
    expect(lstatSync(join(dir, 'copy')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, 'copy'))).toBe('target-dir');
  });

  it.skipIf(!isPosix)('refuses a FIFO as the source without blocking (POSIX only)', async () => {
    const dir = tempDir();
    mkfifo(join(dir, 'pipe'));
    const error = await fails('fs/copy', copyParams(join(dir, 'pipe'), join(dir, 'dst'), false));
    expectKind(error, 'not_regular_file', -32600);
    expect(error.message).toContain('fs/copy only supports regular files, directories, and symlinks');
    expect(existsSync(join(dir, 'dst'))).toBe(false);
  });

  describe('never into itself', () => {
    it('refuses the directory itself and a descendant', async () => {
      const dir = tempDir();
      mkdirSync(join(dir, 'src', 'nested'), { recursive: true });
      for (const destination of [
        join(dir, 'src'),
        join(dir, 'src', 'nested', 'copy'),
        join(dir, 'src', 'new', 'deeper'),
      ]) {
        const error = await fails('fs/copy', copyParams(join(dir, 'src'), destination, true));
        expectKind(error, 'invalid_request', -32600);
        expect(error.message).toContain(
          'fs/copy cannot copy a directory to itself or one of its descendants',
        );
      }
      expect(readdirSync(join(dir, 'src'))).toEqual(['nested']);
    });

    it('sees through a symlinked destination parent', async () => {
      const dir = tempDir();
      mkdirSync(join(dir, 'src', 'nested'), { recursive: true });
      symlinkAt(join(dir, 'src', 'nested'), join(dir, 'alias'));
      const error = await fails('fs/copy', copyParams(join(dir, 'src'), join(dir, 'alias', 'copy'), true));
      expectKind(error, 'invalid_request', -32600);
      expect(existsSync(join(dir, 'src', 'nested', 'copy'))).toBe(false);
    });

    it('sees through a symlink in the source path', async () => {
      const dir = tempDir();
      mkdirSync(join(dir, 'real', 'src'), { recursive: true });
      symlinkAt('real', join(dir, 'alias'));
      const error = await fails(
        'fs/copy',
        copyParams(join(dir, 'alias', 'src'), join(dir, 'real', 'src', 'inner'), true),
      );
      expectKind(error, 'invalid_request', -32600);
      expect(readdirSync(join(dir, 'real', 'src'))).toEqual([]);
    });

    it('allows a sibling whose name merely starts with the source name', async () => {
      const dir = tempDir();
      mkdirSync(join(dir, 'src'));
      writeFileSync(join(dir, 'src', 'f'), 'x');
      await ok('fs/copy', copyParams(join(dir, 'src'), join(dir, 'src-copy'), true));
      expect(readFileSync(join(dir, 'src-copy', 'f'), 'utf8')).toBe('x');
    });
  });

  it('merges into an existing destination directory', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'new'), 'n');
    mkdirSync(join(dir, 'dst'));
    writeFileSync(join(dir, 'dst', 'kept'), 'k');
    await ok('fs/copy', copyParams(join(dir, 'src'), join(dir, 'dst'), true));
    expect(readdirSync(join(dir, 'dst')).sort()).toEqual(['kept', 'new']);
  });

  it('does not merge through a symlink at a directory name of the copy', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'src', 'sub'), { recursive: true });
    writeFileSync(join(dir, 'src', 'sub', 'f'), 'x');
    mkdirSync(join(dir, 'dst'));
    mkdirSync(join(dir, 'elsewhere'));
    symlinkAt(join(dir, 'elsewhere'), join(dir, 'dst', 'sub'));
    const error = await fails('fs/copy', copyParams(join(dir, 'src'), join(dir, 'dst'), true));
    expectKind(error, 'already_exists', -32600);
    expect(readdirSync(join(dir, 'elsewhere'))).toEqual([]);
  });

  it('reports a missing source as not_found', async () => {
    const dir = tempDir();
    const error = await fails('fs/copy', copyParams(join(dir, 'nope'), join(dir, 'dst'), true));
    expectKind(error, 'not_found', -32004);
    expect(error.message).toContain(join(dir, 'nope'));
  });

  it('reports a missing destination parent as not_found and creates nothing', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'src'), 'x');
    const error = await fails('fs/copy', copyParams(join(dir, 'src'), join(dir, 'no', 'dst'), false));
    expectKind(error, 'not_found', -32004);
    expect(existsSync(join(dir, 'no'))).toBe(false);
  });

  it('refuses to write through a symlink destination when sandboxed', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'src'), 'new');
    writeFileSync(join(dir, 'victim'), 'keep');
    symlinkAt('victim', join(dir, 'dst'));
    const error = await fails(
      'fs/copy',
      copyParams(join(dir, 'src'), join(dir, 'dst'), false, { sandbox: RESTRICTED_SANDBOX }),
      { guard: writableGuard(dir) },
    );
    expectKind(error, 'symlink_escape', -32600);
    expect(readFileSync(join(dir, 'victim'), 'utf8')).toBe('keep');
  });

  it('with overwrite: false never replaces a file, a link or a directory at the destination', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'src'), 'new');
    mkdirSync(join(dir, 'tree'));
    writeFileSync(join(dir, 'tree', 'a'), 'a');
    writeFileSync(join(dir, 'file'), 'keep');
    symlinkAt('file', join(dir, 'link'));
    mkdirSync(join(dir, 'dir'));
    for (const [source, destination, recursive] of [
      ['src', 'file', false],
      ['src', 'link', false],
      ['link', 'file', false],
      ['tree', 'dir', true],
    ] as const) {
      const error = await fails(
        'fs/copy',
        copyParams(join(dir, source), join(dir, destination), recursive, { overwrite: false }),
      );
      expectKind(error, 'file_already_exists', -32600);
    }
    expect(readFileSync(join(dir, 'file'), 'utf8')).toBe('keep');
    expect(readlinkSync(join(dir, 'link'))).toBe('file');
    expect(readdirSync(join(dir, 'dir'))).toEqual([]);
    expect(tempLeftovers(dir)).toEqual([]);
    // Absent, the copy lands as with overwrite.
    await ok('fs/copy', copyParams(join(dir, 'src'), join(dir, 'fresh'), false, { overwrite: false }));
    await ok('fs/copy', copyParams(join(dir, 'tree'), join(dir, 'tree-copy'), true, { overwrite: false }));
    expect(readFileSync(join(dir, 'fresh'), 'utf8')).toBe('new');
    expect(readFileSync(join(dir, 'tree-copy', 'a'), 'utf8')).toBe('a');
  });

  it.skipIf(!isPosix)(
    'with overwrite: false never replaces a link that appears at the destination while it copies (a racing swap; POSIX only: the swap plants symlinks)',
    async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'src'), 'SOURCE');
      writeFileSync(join(dir, 'victim'), 'VICTIM');
      const destination = join(dir, 'dst');
      const clobbered = join(dir, 'clobbered');
      // Plants a link at the destination, holds it a millisecond, removes it, waits a millisecond,
      // forever. Once its own link is in place only it removes it, so finding anything else there
      // at the end of the hold means a copy replaced the link (what a check-then-rename copy does).
      const script = `const fs = require('fs'); const d = ${JSON.stringify(destination)};
        const pause = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
        for (;;) {
          try { fs.symlinkSync('victim', d); } catch { pause(); continue; }
          pause();
          if (!fs.lstatSync(d).isSymbolicLink()) { fs.writeFileSync(${JSON.stringify(clobbered)}, 'x'); process.exit(0); }
          fs.unlinkSync(d);
          pause();
        }`;
      const toggler = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
      const outcomes = { copied: 0, refused: 0 };
      const planted = () => {
        try {
          return lstatSync(destination).isSymbolicLink();
        } catch {
          return false;
        }
      };
      try {
        // The toggler runs once its first link is seen (node takes a while to start).
        const started = Date.now() + 20_000;
        while (!planted()) {
          expect(Date.now(), 'the toggler never planted its link').toBeLessThan(started);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        // At least 40 copies, and until both outcomes were seen (a link there, the name free).
        const deadline = Date.now() + 30_000;
        while (
          (outcomes.copied + outcomes.refused < 40 || outcomes.copied === 0 || outcomes.refused === 0) &&
          Date.now() < deadline
        ) {
          const reply = await call(
            'fs/copy',
            copyParams(join(dir, 'src'), destination, false, {
              overwrite: false,
              sandbox: RESTRICTED_SANDBOX,
            }),
            { guard: writableGuard(dir) },
          );
          if (reply.status === 'error') {
            expect(['file_already_exists', 'symlink_escape']).toContain(reply.payload.data.errorKind);
            outcomes.refused++;
            continue;
          }
          outcomes.copied++;
          // Ours, a regular file the toggler cannot replace: only then is it removed for the next round.
          expect(lstatSync(destination).isFile()).toBe(true);
          expect(readFileSync(destination, 'utf8')).toBe('SOURCE');
          rmSync(destination);
        }
      } finally {
        toggler.kill('SIGKILL');
      }
      expect(existsSync(clobbered)).toBe(false);
      expect(readFileSync(join(dir, 'victim'), 'utf8')).toBe('VICTIM');
      // The race was run: a link stood there for some copies, the name was free for others.
      expect(outcomes.refused).toBeGreaterThan(0);
      expect(outcomes.copied).toBeGreaterThan(0);
    },
    60_000,
  );

  it.skipIf(!isLinux)(
    'copies a 5 000-level tree (far past PATH_MAX) without overflowing the stack (Linux only)',
    async () => {
      const dir = tempDir();
      mkdirSync(join(dir, 'src'));
      makeDeepTree(join(dir, 'src'), 5000, 'bottom');
      await ok('fs/copy', copyParams(join(dir, 'src'), join(dir, 'dst'), true));
      expect(inspectDeepTree(join(dir, 'dst'))).toEqual({ depth: 5000, leaf: 'bottom' });
    },
    120_000,
  );

  it.skipIf(!isLinux)('copies names that are not UTF-8 exactly (Linux only)', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'src'));
    const name = Buffer.from([0x66, 0xff, 0x67]);
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/src/`), name]), 'bytes');
    await ok('fs/copy', copyParams(join(dir, 'src'), join(dir, 'dst'), true));
    const names = readdirSync(join(dir, 'dst'), { encoding: 'buffer' });
    expect(names).toHaveLength(1);
    expect(names[0]?.equals(name)).toBe(true);
  });
});
