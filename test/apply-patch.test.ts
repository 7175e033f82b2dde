import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, REPO } from './support/build.js';
import { personPath, runCli } from './support/cli.js';
import { codexBinary } from './support/codex-binary.js';
import { startDirLinkToggler } from './support/dir-link-toggler.js';

/**
 * `fs-sandbox apply-patch` (fs/applyPatch through the CLI and real bwrap) against the reference: the
 * Codex CLI binary of the pinned `@openai/codex` devDependency, run under the name `apply_patch`.
 * Every scenario starts from the same tree in two directories; the final trees must be equal byte
 * for byte, and so must the exit status and, on success, the printed summary.
 */

const BINARY = process.platform === 'linux' ? codexBinary() : null;

type Tree = Record<string, string>;

interface Scenario {
  name: string;
  before: Tree;
  patch: string;
  /** Directories to make before the patch runs (a delete of a directory). */
  directories?: string[];
}

const P = (body: string) => `*** Begin Patch\n${body}\n*** End Patch\n`;

const SCENARIOS: Scenario[] = [
  { name: 'add', before: {}, patch: P('*** Add File: hello.txt\n+hello\n+world') },
  {
    name: 'multiple operations',
    before: { 'del.txt': 'x\n', 'mod.txt': 'a\nb\n' },
    patch: P(
      '*** Add File: nested/new.txt\n+new\n*** Delete File: del.txt\n*** Update File: mod.txt\n@@\n-a\n+A',
    ),
  },
  {
    name: 'multiple chunks',
    before: { 'm.txt': 'foo\nbar\nbaz\nqux\n' },
    patch: P('*** Update File: m.txt\n@@\n foo\n-bar\n+BAR\n@@\n baz\n-qux\n+QUX'),
  },
  {
    name: 'move to a new directory',
    before: { 'src.txt': 'line\n' },
    patch: P('*** Update File: src.txt\n*** Move to: deep/er/dst.txt\n@@\n-line\n+line2'),
  },
  {
    name: 'move overwriting a destination',
    before: { 'src.txt': 'from\n', 'dst.txt': 'old\n' },
    patch: P('*** Update File: src.txt\n*** Move to: dst.txt\n@@\n-from\n+new'),
  },
  { name: 'add overwriting', before: { 'a.txt': 'old\n' }, patch: P('*** Add File: a.txt\n+new') },
  { name: 'empty patch', before: { 'a.txt': 'a\n' }, patch: P('').replace('\n\n', '\n') },
  { name: 'missing context', before: { 'a.txt': 'a\n' }, patch: P('*** Update File: a.txt\n@@\n-nope\n+x') },
  { name: 'delete of a missing file', before: {}, patch: P('*** Delete File: gone.txt') },
  { name: 'empty update hunk', before: { 'a.txt': 'a\n' }, patch: P('*** Update File: a.txt') },
  { name: 'update of a missing file', before: {}, patch: P('*** Update File: gone.txt\n@@\n-a\n+b') },
  { name: 'delete of a directory', before: {}, directories: ['d'], patch: P('*** Delete File: d') },
  { name: 'invalid hunk header', before: {}, patch: P('*** Frobnicate File: x') },
  {
    name: 'trailing newline appended on update',
    before: { 'n.txt': 'no newline' },
    patch: P('*** Update File: n.txt\n@@\n-no newline\n+with newline'),
  },
  {
    name: 'failure after partial success',
    before: { 'u.txt': 'foo\n' },
    patch: P('*** Add File: first.txt\n+one\n*** Update File: u.txt\n@@\n-zzz\n+x'),
  },
  {
    name: 'pure-addition chunk',
    before: { 'a.txt': 'one\ntwo\n' },
    patch: P('*** Update File: a.txt\n@@\n+three\n+four'),
  },
  {
    name: 'whitespace-padded headers and markers',
    before: { 'a.txt': 'x\ny\n' },
    patch: '  *** Begin Patch  \n   *** Update File: a.txt   \n@@\n-x\n+X\n *** End Patch \n',
  },
  {
    name: 'unicode',
    before: { 'u.py': 'import asyncio  # local import \u2013 avoids top\u2011level dep\nprint("é")\n' },
    patch: P(
      '*** Update File: u.py\n@@\n-import asyncio  # local import - avoids top-level dep\n+import asyncio  # ünïcödé ✓',
    ),
  },
  {
    name: 'deletion-only update',
    before: { 'a.txt': 'keep\ndrop\nkeep2\n' },
    patch: P('*** Update File: a.txt\n@@\n keep\n-drop'),
  },
  {
    name: 'end-of-file marker',
    before: { 'a.txt': 'x\nend\nx\nend\n' },
    patch: P('*** Update File: a.txt\n@@\n-end\n+END\n*** End of File'),
  },
  {
    name: 'CRLF file stays CRLF',
    before: { 'c.txt': 'a\r\nb\r\n' },
    patch: P('*** Update File: c.txt\n@@\n-a\n+A'),
  },
  {
    name: 'mixed line endings: untouched lines keep theirs, new lines take the first line break',
    before: { 'm.txt': 'a\r\nb\nc\r\nd\n', 'n.txt': 'a\nb\r\nc\r\n' },
    patch: P('*** Update File: m.txt\n@@\n b\n-c\n+C\n+C2\n*** Update File: n.txt\n@@\n-c\n+C\n+C2'),
  },
  {
    name: 'a context line matched loosely keeps its own text; a removed and re-added one does not',
    before: { 'f.txt': 'a\r\nb  \nc\r\nd\n', 'g.txt': 'a\r\nb\nc\r\nd\n' },
    patch: P('*** Update File: f.txt\n@@\n b\n-c\n+C\n*** Update File: g.txt\n@@\n-b\n+b\n-c\n+C\n d'),
  },
  {
    name: 'CRLF file without a final newline',
    before: { 'c.txt': 'a\r\nb' },
    patch: P('*** Update File: c.txt\n@@\n-a\n+A'),
  },
  {
    name: 'a UTF-8 BOM is kept when a later line changes',
    before: { 'b.txt': '\uFEFFone\ntwo\n' },
    patch: P('*** Update File: b.txt\n@@\n-two\n+TWO'),
  },
  {
    name: 'a UTF-8 BOM is part of the first line (context without it does not match)',
    before: { 'b.txt': '\uFEFFone\ntwo\n' },
    patch: P('*** Update File: b.txt\n@@\n-one\n+ONE'),
  },
  {
    name: 'heredoc-wrapped patch',
    before: {},
    patch: "<<'EOF'\n*** Begin Patch\n*** Add File: h.txt\n+h\n*** End Patch\nEOF\n",
  },
];

function plant(dir: string, scenario: Scenario): void {
  for (const directory of scenario.directories ?? []) mkdirSync(join(dir, directory), { recursive: true });
  for (const [path, text] of Object.entries(scenario.before)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

function treeOf(dir: string, prefix = ''): Tree {
  const tree: Tree = {};
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      tree[`${path}/`] = '';
      Object.assign(tree, treeOf(dir, path));
    } else {
      tree[path] = readFileSync(join(dir, path)).toString('base64');
    }
  }
  return tree;
}

let base = '';
let applyPatch = '';

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-apply-patch-');
  if (BINARY !== null) {
    mkdirSync(join(base, 'bin'));
    applyPatch = join(base, 'bin', 'apply_patch');
    symlinkSync(BINARY, applyPatch);
  }
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const env = () => ({ PATH: personPath(), TMPDIR: join(base, 'tmp') });

async function ours(dir: string, patch: string, flags: string[] = []) {
  mkdirSync(join(base, 'tmp'), { recursive: true });
  return await runCli(['apply-patch', '--cwd', dir, ...flags, '-'], {
    user: 'root',
    env: env(),
    input: patch,
  });
}

describe.skipIf(BINARY === null)(
  BINARY === null
    ? `apply-patch against the reference apply_patch: SKIPPED, @openai/codex 0.171.0 installed no binary for ${process.platform}-${process.arch}`
    : 'apply-patch matches the reference apply_patch (@openai/codex 0.171.0)',
  () => {
    for (const [index, scenario] of SCENARIOS.entries()) {
      it(scenario.name, async () => {
        const theirs = join(base, `ref-${index}`);
        const mine = join(base, `ours-${index}`);
        mkdirSync(theirs);
        mkdirSync(mine);
        plant(theirs, scenario);
        plant(mine, scenario);
        const reference = spawnSync(applyPatch, [scenario.patch], { cwd: theirs, encoding: 'utf8' });
        const run = await ours(mine, scenario.patch);
        expect(treeOf(mine)).toEqual(treeOf(theirs));
        expect(run.code).toBe(reference.status);
        if (reference.status === 0) expect(run.stdout).toBe(reference.stdout);
      });
    }
  },
);

describe.skipIf(process.platform !== 'linux')('apply-patch security through real bwrap (Linux only)', () => {
  function workspace(name: string): { ws: string; outside: string } {
    const root = join(base, name);
    const ws = join(root, 'ws');
    const outside = join(root, 'outside');
    mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
    mkdirSync(join(ws, 'secret'), { recursive: true });
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'target.txt'), 'outside\n');
    writeFileSync(join(ws, 'in.txt'), 'in\n');
    return { ws, outside };
  }
  const outsidePatch = (outside: string) =>
    P(
      `*** Add File: first.txt\n+first\n*** Update File: ${join(outside, 'target.txt')}\n@@\n-outside\n+pwned`,
    );

  it('never: a patch touching a path outside the writable roots is rejected before anything is written', async () => {
    const { ws, outside } = workspace('never');
    const run = await ours(ws, outsidePatch(outside), ['--approval-policy', 'never']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('[patch_rejected]');
    expect(existsSync(join(ws, 'first.txt'))).toBe(false);
    expect(readFileSync(join(outside, 'target.txt'), 'utf8')).toBe('outside\n');
  });

  it('unless-trusted: the same patch asks and writes nothing', async () => {
    const { ws, outside } = workspace('unless-trusted');
    const run = await ours(ws, outsidePatch(outside), ['--approval-policy', 'unless-trusted']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('needs approval');
    expect(existsSync(join(ws, 'first.txt'))).toBe(false);
    expect(readFileSync(join(outside, 'target.txt'), 'utf8')).toBe('outside\n');
  });

  it('on-failure with the pre-check off: the write outside fails in the sandbox, the outside file is unchanged', async () => {
    const { ws, outside } = workspace('kernel');
    const run = await ours(ws, outsidePatch(outside), ['--approval-policy', 'on-failure', '--no-precheck']);
    expect(run.code).toBe(1);
    // The sandbox does not even show the outside file: it is missing there, or refused.
    expect(run.stderr).toMatch(/\[(not_found|permission_denied)\]/);
    // Not a transaction: the first file stays, and the error says so.
    expect(readFileSync(join(ws, 'first.txt'), 'utf8')).toBe('first\n');
    expect(run.stderr).toContain(`A ${join(ws, 'first.txt')}`);
    expect(readFileSync(join(outside, 'target.txt'), 'utf8')).toBe('outside\n');
  });

  for (const precheck of [[], ['--no-precheck']]) {
    it(`a patch creating .git/hooks/x fails (${precheck.length === 0 ? 'pre-check on' : 'pre-check off'})`, async () => {
      const { ws } = workspace(`git-${precheck.length}`);
      const run = await ours(ws, P('*** Add File: .git/hooks/x\n+#!/bin/sh'), [
        '--approval-policy',
        'on-failure',
        ...precheck,
      ]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/protected|permission_denied|read-only/);
      expect(existsSync(join(ws, '.git', 'hooks', 'x'))).toBe(false);
    });

    it(`a patch writing a denied path fails (${precheck.length === 0 ? 'pre-check on' : 'pre-check off'})`, async () => {
      const { ws } = workspace(`deny-${precheck.length}`);
      const run = await ours(ws, P('*** Add File: secret/x.txt\n+x'), [
        '--deny',
        join(ws, 'secret'),
        '--approval-policy',
        'on-failure',
        ...precheck,
      ]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('permission_denied');
      expect(readdirSync(join(ws, 'secret'))).toEqual([]);
    });

    it(`a directory swapped for a symlink to the outside is not followed (${precheck.length === 0 ? 'pre-check on' : 'pre-check off'})`, async () => {
      const { ws, outside } = workspace(`swap-${precheck.length}`);
      // The state after a verified directory was swapped: the helper checks at use time, without following it.
      symlinkSync(outside, join(ws, 'link'));
      const run = await ours(ws, P('*** Update File: link/target.txt\n@@\n-outside\n+pwned'), precheck);
      expect(run.code).toBe(1);
      expect(readFileSync(join(outside, 'target.txt'), 'utf8')).toBe('outside\n');
      expect(lstatSync(join(ws, 'link')).isSymbolicLink()).toBe(true);
    });
  }

  // A real race: another process keeps swapping `ws/sub` between a directory and a symlink to the
  // outside while patches into `sub/` are verified and applied, sequentially and atomically, with
  // the pre-check on and off. Whatever each run answers, the outside directory never changes.
  it('a directory swapped for a symlink to the outside while patches apply never leads a write there', async () => {
    const root = join(base, 'race');
    const ws = join(root, 'ws');
    const keep = join(root, 'keep');
    mkdirSync(ws, { recursive: true });
    mkdirSync(keep);
    const names = Array.from({ length: 20 }, (_, index) => `k${index}`);
    for (const name of names) writeFileSync(join(keep, name), 'x');
    // Each state holds about as long as a helper takes to plan and commit a small patch.
    const toggler = startDirLinkToggler(ws, 2000);
    const outcomes = new Map<string, number>();
    try {
      for (let round = 0; round < 24; round++) {
        const flags = [
          ...(round % 2 === 0 ? [] : ['--no-precheck']),
          ...(round % 4 < 2 ? [] : ['--atomic']),
          '--approval-policy',
          'on-failure',
        ];
        const patch = P(
          `*** Add File: sub/r${round}.txt\n+planted\n*** Update File: sub/k0\n@@\n+pwned\n*** Delete File: sub/k${(round % 18) + 2}`,
        );
        const run = await ours(ws, patch, flags);
        expect([0, 1], run.stderr).toContain(run.code);
        const kind = run.code === 0 ? 'applied' : (/\[(\w+)\]/.exec(run.stderr)?.[1] ?? 'error');
        outcomes.set(kind, (outcomes.get(kind) ?? 0) + 1);
        expect(readdirSync(keep).sort(), `round ${round}`).toEqual([...names].sort());
        for (const name of names)
          expect(readFileSync(join(keep, name), 'utf8'), `${name}, round ${round}`).toBe('x');
      }
    } finally {
      toggler.kill('SIGKILL');
    }
    expect(outcomes.get('internal_error')).toBeUndefined();
  }, 180_000);
});

it('the reference binary is what the lockfile pins', () => {
  const lock = readFileSync(join(REPO, 'pnpm-lock.yaml'), 'utf8');
  expect(lock).toContain('@openai/codex@0.171.0');
  if (BINARY !== null) expect(execFileSync(BINARY, ['--version'], { encoding: 'utf8' })).toContain('0.171.0');
});
