import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  type PathLike,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as host from '../src/runner/host-reads.js';

let base: string;
const liveEnv: Record<string, string | undefined> = {};

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'fs-sandbox-host-reads-'));
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

/** The journal of `reads`, made while one is open (as SandboxRunner builds a launch). */
async function journalOf(reads: () => void) {
  return (
    await host.journaled(async () => {
      reads();
    })
  ).reads;
}

function swallow(read: () => unknown): void {
  try {
    read();
  } catch {
    // The builders catch these too; the error's code is still witnessed.
  }
}

describe('host reads', () => {
  it('return what node returns, and throw what node throws', () => {
    writeFileSync(join(base, 'f'), 'gitdir: ../x\n');
    symlinkSync('f', join(base, 'link'));
    expect(host.lstat(join(base, 'link')).isSymbolicLink()).toBe(true);
    expect(host.stat(join(base, 'link')).isFile()).toBe(true);
    expect(host.readlink(join(base, 'link')).toString()).toBe('f');
    expect(host.realpath(join(base, 'link')).toString()).toBe(join(base, 'f'));
    expect(host.readHead(join(base, 'f'), 6).toString()).toBe('gitdir');
    expect(
      host
        .readdirTyped(base)
        .map((entry) => String(entry.name))
        .sort(),
    ).toEqual(['f', 'link']);
    expect(
      host
        .readdirTyped(base)
        .find((entry) => String(entry.name) === 'link')
        ?.isSymbolicLink(),
    ).toBe(true);
    expect(() => host.lstat(join(base, 'missing'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(() => host.assertExecutable(join(base, 'f'))).toThrow(expect.objectContaining({ code: 'EACCES' }));
  });

  it('take the strings Yarn Plug’n’Play’s fs answers for bytes, and refuse a name whose bytes they lost', () => {
    // What PnP's replacement of realpathSync.native does: the `buffer` encoding ignored, a string
    // decoded as UTF-8 answered (a byte that is not UTF-8 becomes U+FFFD).
    const native = realpathSync.native;
    realpathSync.native = ((path: PathLike) => native(path, 'utf8')) as typeof native;
    try {
      writeFileSync(join(base, 'café'), '');
      expect(host.realpath(join(base, 'café'))).toEqual(Buffer.from(join(base, 'café')));
      mkdirSync(Buffer.concat([Buffer.from(`${base}/`), Buffer.from([0xff])]));
      symlinkSync(Buffer.from([0xff]) as unknown as string, join(base, 'odd'));
      expect(() => host.realpath(join(base, 'odd'))).toThrow(
        expect.objectContaining({ kind: 'sandbox_unavailable' }),
      );
    } finally {
      realpathSync.native = native;
    }
  });

  it('are witnessed only while a journal is open, each distinct question once', async () => {
    const journal = await journalOf(() => {
      host.lstat(base);
      host.lstat(base);
      host.stat(base);
      swallow(() => host.realpath(join(base, 'missing')));
    });
    expect(journal.size).toBe(3);
    host.lstat(base);
    swallow(() => host.lstat(join(base, 'after')));
    expect(journal.size).toBe(3);
    expect(journal.stillHolds()).toBe(true);
  });

  // Each change a launch depends on, made after the reads: the journal no longer holds.
  const changes: Array<{ name: string; setUp: () => void; reads: () => void; change: () => void }> = [
    {
      name: 'a symlink re-pointed under the same name (its inode may even be reused)',
      setUp: () => {
        mkdirSync(join(base, 'a'));
        mkdirSync(join(base, 'b'));
        symlinkSync('a', join(base, 'root'));
      },
      reads: () => {
        host.lstat(join(base, 'root'));
        host.readlink(join(base, 'root'));
      },
      change: () => {
        unlinkSync(join(base, 'root'));
        symlinkSync('b', join(base, 'root'));
      },
    },
    {
      name: 'a missing path created',
      setUp: () => {},
      reads: () => swallow(() => host.lstat(join(base, 'secret'))),
      change: () => writeFileSync(join(base, 'secret'), 'x'),
    },
    {
      name: 'a directory replaced by a file of the same name',
      setUp: () => mkdirSync(join(base, 'd')),
      reads: () => host.stat(join(base, 'd')),
      change: () => {
        rmSync(join(base, 'd'), { recursive: true });
        writeFileSync(join(base, 'd'), '');
      },
    },
    {
      name: 'a directory that gained an entry (a deny glob would match it)',
      setUp: () => mkdirSync(join(base, 'keys')),
      reads: () => host.readdirTyped(join(base, 'keys')),
      change: () => writeFileSync(join(base, 'keys', 'new.pem'), ''),
    },
    {
      name: 'an entry renamed inside a directory',
      setUp: () => writeFileSync(join(base, 'old'), ''),
      reads: () => host.readdirTyped(base),
      change: () => renameSync(join(base, 'old'), join(base, 'new')),
    },
    {
      name: 'a .git pointer rewritten to name another directory',
      setUp: () => writeFileSync(join(base, '.git'), 'gitdir: ../one\n'),
      reads: () => host.readHead(join(base, '.git'), 4096),
      change: () => writeFileSync(join(base, '.git'), 'gitdir: ../two\n'),
    },
    {
      name: 'a second name (hard link) made for a file',
      setUp: () => writeFileSync(join(base, 'denied'), ''),
      reads: () => host.lstatBigint(join(base, 'denied')),
      change: () => linkSync(join(base, 'denied'), join(base, 'alias')),
    },
    {
      name: 'an executable that lost its execute bit',
      setUp: () => {
        writeFileSync(join(base, 'tool'), '');
        chmodSync(join(base, 'tool'), 0o755);
      },
      reads: () => host.assertExecutable(join(base, 'tool')),
      change: () => chmodSync(join(base, 'tool'), 0o644),
    },
    {
      name: 'FS_SANDBOX_BWRAP set in the live environment',
      setUp: () => {},
      reads: () => host.variable(liveEnv, 'FS_SANDBOX_BWRAP'),
      change: () => {
        liveEnv.FS_SANDBOX_BWRAP = '/opt/bwrap';
      },
    },
    {
      name: 'a real path that now leads elsewhere',
      setUp: () => {
        mkdirSync(join(base, 'x'));
        symlinkSync('x', join(base, 'via'));
      },
      reads: () => host.realpath(join(base, 'via')),
      change: () => {
        unlinkSync(join(base, 'via'));
        mkdirSync(join(base, 'via'));
      },
    },
  ];

  for (const { name, setUp, reads, change } of changes) {
    it(`no longer hold after ${name}`, async () => {
      setUp();
      const journal = await journalOf(reads);
      expect(journal.stillHolds()).toBe(true);
      change();
      expect(journal.stillHolds()).toBe(false);
    });
  }

  it('keep a long answer as its hash: a large listing costs little, and a new entry still breaks it', async () => {
    mkdirSync(join(base, 'many'));
    for (let i = 0; i < 1000; i++) writeFileSync(join(base, 'many', `${'n'.repeat(200)}${i}`), '');
    const journal = await journalOf(() => host.readdirTyped(join(base, 'many')));
    expect(journal.bytes).toBeLessThan(200);
    expect(journal.stillHolds()).toBe(true);
    writeFileSync(join(base, 'many', 'one-more'), '');
    expect(journal.stillHolds()).toBe(false);
  });

  it('read a FIFO put where a pointer file was without blocking the broker', async () => {
    execFileSync('mkfifo', [join(base, '.git')]);
    // open(2) of a FIFO with no writer would wait forever; non-blocking, it returns at once, and
    // the positioned read refuses a pipe (the caller then treats it as no pointer at all).
    expect(() => host.readHead(join(base, '.git'), 4096)).toThrow(
      expect.objectContaining({ code: 'ESPIPE' }),
    );
  });

  it('keep holding when only what no builder uses changed (a file written, its times)', async () => {
    writeFileSync(join(base, 'data'), 'one');
    const journal = await journalOf(() => host.lstat(join(base, 'data')));
    writeFileSync(join(base, 'data'), 'two, longer');
    expect(journal.stillHolds()).toBe(true);
  });

  it('never hold when one question got two answers while the launch was built', async () => {
    const journal = await journalOf(() => {
      swallow(() => host.lstat(join(base, 'racing')));
      writeFileSync(join(base, 'racing'), '');
      host.lstat(join(base, 'racing'));
    });
    expect(journal.stillHolds()).toBe(false);
  });

  it('give builds that interleave at their awaits each every read of its own', async () => {
    mkdirSync(join(base, 'a'));
    mkdirSync(join(base, 'b'));
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    const [first, second] = await Promise.all([
      host.journaled(async () => {
        host.lstat(join(base, 'a'));
        // Still open when the second build reads.
        await tick();
        await tick();
        host.lstat(join(base, 'a'));
      }),
      host.journaled(async () => {
        await tick();
        host.lstat(join(base, 'b'));
      }),
    ]);
    // The second build's read landed in the first journal too (a superset), never the reverse loss.
    rmSync(join(base, 'b'), { recursive: true });
    expect(second.reads.stillHolds()).toBe(false);
    expect(first.reads.stillHolds()).toBe(false);
    const third = await journalOf(() => host.lstat(join(base, 'a')));
    rmSync(join(base, 'a'), { recursive: true });
    expect(third.stillHolds()).toBe(false);
  });
});
