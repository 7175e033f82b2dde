import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { type CliUser, callMethod, NOBODY_UID, PRECHECK_MODES, USERS } from './support/cli.js';
import {
  cliEnv,
  createFixture,
  type Fixture,
  removeFixture,
  uri,
  workspaceContext,
} from './support/fixture.js';
import { useServedBroker } from './support/served-broker.js';
import { diffTrees, snapshotTree, type TreeSnapshot } from './support/tree-snapshot.js';

/**
 * Deny globs through a real `fs-sandbox serve` (one per mode, see served-broker.ts) and real bwrap,
 * as root and as nobody, with the pre-check on and off (off: only the kernel's masks stand between
 * the helper and a match); a smoke test per mode runs them through `fs-sandbox call` itself. Every
 * match must be unreadable under every spelling, a glob whose matches cannot all be masked must
 * refuse the sandbox rather than mask some, and a spelling that cannot be enforced is refused as
 * invalid_params. The whole fixture tree is unchanged after every request.
 *
 * The globs are scoped to `proj/` (relative, resolved against the workspace cwd); globs over the
 * whole workspace, beside its links to `outside`, are deny-globs-beside-links.test.ts.
 *
 *   ws/proj/notes.txt                      readable control
 *   ws/proj/certs/server.pem, top.key      matches of `**` + `/*.{pem,key}`
 *   ws/proj/certs/a/b/c/id.key             a deeper match
 *   ws/proj/node_modules/pkg -> .pnpm/pkg@1.0.0/node_modules/pkg   (pnpm's layout; holds test.env)
 */

beforeAll(() => {
  ensureBuilt();
});

const PEM = 'PEM-SECRET-CONTENT';
const KEY = 'KEY-SECRET-CONTENT';
const ENV = 'ENV-SECRET-CONTENT';
const SECRETS = [PEM, KEY, ENV];

type Context = { permissions: { file_system: { entries: unknown[] } } };

function withGlob(fixture: Fixture, pattern: string): Context {
  const context = workspaceContext(fixture) as Context;
  context.permissions.file_system.entries.push({ path: { type: 'glob_pattern', pattern }, access: 'deny' });
  return context;
}

function write(path: string, content: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, content);
}

let wide: string | undefined;

/**
 * 20 200 empty files, over the deny-glob scan's bound, made once for both users (only read). Outside
 * the snapshotted fixture: hashing them before and after would dominate the suite.
 */
function wideTree(): string {
  if (wide !== undefined) return wide;
  wide = mkdtempSync('/tmp/fs-sandbox-wide-');
  // Readable by nobody too: a directory the broker cannot read, its helper cannot read either.
  chmodSync(wide, 0o755);
  for (let d = 0; d < 101; d++) {
    mkdirSync(join(wide, `d${d}`));
    for (let f = 0; f < 200; f++) writeFileSync(join(wide, `d${d}`, `f${f}`), '');
  }
  return wide;
}

afterAll(() => {
  if (wide !== undefined) rmSync(wide, { recursive: true, force: true });
});

describe.each(USERS)('as %s', (user: CliUser) => {
  describe.each(PRECHECK_MODES)('%s', (_mode, precheck) => {
    const served = useServedBroker(user, precheck);
    let fixture: Fixture;
    let proj: string;
    let before: TreeSnapshot;

    /** Gives the tree to nobody (as the fixture does) and takes the snapshot every request is checked against. */
    async function settle(): Promise<void> {
      if (user === 'nobody') execFileSync('chown', ['-R', '-h', `${NOBODY_UID}:${NOBODY_UID}`, fixture.base]);
      before = await snapshotTree(fixture.base);
    }

    beforeEach(async () => {
      fixture = await createFixture(user);
      proj = join(fixture.ws, 'proj');
      write(join(proj, 'notes.txt'), 'plain notes\n');
      write(join(proj, 'certs', 'server.pem'), PEM);
      write(join(proj, 'top.key'), KEY);
      write(join(proj, 'certs', 'a', 'b', 'c', 'id.key'), KEY);
      const pkg = join(proj, 'node_modules', '.pnpm', 'pkg@1.0.0', 'node_modules', 'pkg');
      write(join(pkg, 'test.env'), ENV);
      write(join(pkg, 'index.js'), 'module.exports = 1;\n');
      symlinkSync('.pnpm/pkg@1.0.0/node_modules/pkg', join(proj, 'node_modules', 'pkg'));
      await settle();
    });

    afterEach(async () => {
      await removeFixture(fixture);
    });

    async function call(
      method: string,
      params: Record<string, unknown>,
      sandbox: Context,
      via: 'serve' | 'call' = 'serve',
    ) {
      const outcome =
        via === 'serve'
          ? await served.call(method, { ...params, sandbox })
          : await callMethod(method, { ...params, sandbox }, { user, env: cliEnv(fixture), precheck });
      const label = `${method} ${JSON.stringify(params)}`;
      const printed = outcome.run.stdout + outcome.run.stderr;
      for (const secret of SECRETS) {
        expect(printed, label).not.toContain(secret);
        expect(printed, label).not.toContain(Buffer.from(secret).toString('base64').slice(0, 12));
      }
      expect(diffTrees(before, await snapshotTree(fixture.base)), label).toEqual([]);
      return { ...outcome, label };
    }

    async function expectRefused(
      method: string,
      params: Record<string, unknown>,
      sandbox: Context,
      via: 'serve' | 'call' = 'serve',
    ): Promise<string> {
      const outcome = await call(method, params, sandbox, via);
      expect(outcome.code, outcome.label).toBe(1);
      expect(['internal_error', 'helper_failed'], outcome.label).not.toContain(outcome.error?.data.errorKind);
      return outcome.error?.data.errorKind as string;
    }

    async function expectRead(
      path: string,
      sandbox: Context,
      content: string,
      via: 'serve' | 'call' = 'serve',
    ): Promise<void> {
      const outcome = await call('fs/readFile', { path: uri(path) }, sandbox, via);
      expect(outcome.code, outcome.run.stdout + outcome.run.stderr).toBe(0);
      expect(Buffer.from(outcome.result?.dataBase64 as string, 'base64').toString()).toBe(content);
    }

    it('`fs-sandbox call` itself reads the control and refuses a match, read and written (a smoke test of the CLI path)', async () => {
      const sandbox = withGlob(fixture, 'proj/**/*.{pem,key}');
      await expectRead(join(proj, 'notes.txt'), sandbox, 'plain notes\n', 'call');
      const match = join(proj, 'certs', 'server.pem');
      const kind = await expectRefused('fs/readFile', { path: uri(match) }, sandbox, 'call');
      if (precheck) expect(kind).toBe('permission_denied');
      await expectRefused('fs/writeFile', { path: uri(match), dataBase64: 'cHdu' }, sandbox, 'call');
    });

    it('`**/*.{pem,key}` hides both kinds, at any depth and under every spelling', async () => {
      const sandbox = withGlob(fixture, 'proj/**/*.{pem,key}');
      await expectRead(join(proj, 'notes.txt'), sandbox, 'plain notes\n');
      for (const match of [
        join(proj, 'certs', 'server.pem'),
        join(proj, 'top.key'),
        join(proj, 'certs/a/b/c/id.key'),
      ]) {
        const kind = await expectRefused('fs/readFile', { path: uri(match) }, sandbox);
        if (precheck) expect(kind).toBe('permission_denied');
        await expectRefused('fs/readFile', { path: `file:///proc/self/root${match}` }, sandbox);
        await expectRefused('fs/writeFile', { path: uri(match), dataBase64: 'cHdu' }, sandbox);
        await expectRefused(
          'fs/copy',
          { sourcePath: uri(match), destinationPath: uri(join(proj, 'leak')), recursive: false },
          sandbox,
        );
      }
      if (!precheck) {
        // The same spelling reaches unmasked files: what refuses the matches above is the mask.
        await expectRead(`/proc/self/root${join(proj, 'notes.txt')}`, sandbox, 'plain notes\n');
      }
      const listing = await call('fs/readDirectory', { path: uri(join(proj, 'certs')) }, sandbox);
      expect(listing.code).toBe(0);
    });

    it('masks a match below a symlinked directory at its real location (pnpm node_modules)', async () => {
      const sandbox = withGlob(fixture, 'proj/**/*.env');
      const real = join(proj, 'node_modules', '.pnpm', 'pkg@1.0.0', 'node_modules', 'pkg');
      await expectRead(join(proj, 'node_modules', 'pkg', 'index.js'), sandbox, 'module.exports = 1;\n');
      for (const spelling of [join(proj, 'node_modules', 'pkg', 'test.env'), join(real, 'test.env')]) {
        await expectRefused('fs/readFile', { path: uri(spelling) }, sandbox);
        await expectRefused('fs/readFile', { path: `file:///proc/self/root${spelling}` }, sandbox);
      }
    });

    it('judges a symlinked directory by its target: unreadable, nothing to refuse; in scope, refused when the glob names files through it', async () => {
      write(join(fixture.outside, 'keys', 'stolen.pem'), PEM);
      symlinkSync(join(fixture.outside, 'keys'), join(proj, 'keys-link'));
      await settle();
      // `outside` is not readable in this sandbox: nothing below the link can be read through it.
      const sandbox = withGlob(fixture, 'proj/**/*.pem');
      await expectRead(join(proj, 'notes.txt'), sandbox, 'plain notes\n');
      await expectRefused('fs/readFile', { path: uri(join(proj, 'keys-link', 'stolen.pem')) }, sandbox);
      await expectRefused('fs/readFile', { path: uri(join(proj, 'certs', 'server.pem')) }, sandbox);
      // `**` followed by more than one name may match through the link's own name (node_modules/pkg
      // -> .pnpm/…/pkg, inside the glob's scope): refused, typed, naming the link.
      const pnpm = await call(
        'fs/readFile',
        { path: uri(join(proj, 'notes.txt')) },
        withGlob(fixture, 'proj/**/node_modules/*/*.env'),
      );
      expect(pnpm.error?.data.errorKind).toBe('permission_denied');
      expect(pnpm.error?.message).toMatch(
        /cannot be enforced beside the symlinked directory .*node_modules\/pkg/,
      );
    });

    it('refuses the sandbox for a match deeper than the scan bound', async () => {
      const levels = Array.from({ length: 33 }, (_, i) => `d${i + 1}`);
      write(join(proj, 'deep', ...levels, 'beyond.pem'), PEM);
      await settle();
      const outcome = await call(
        'fs/readFile',
        { path: uri(join(proj, 'notes.txt')) },
        withGlob(fixture, 'proj/deep/**/*.pem'),
      );
      expect(outcome.error?.data.errorKind).toBe('sandbox_unavailable');
      expect(outcome.error?.message).toMatch(
        /32 levels below .* still has entries that could match; narrow the glob/,
      );
    });

    it('refuses spellings that cannot be enforced with invalid_params naming them', async () => {
      for (const pattern of [
        '../outside/*',
        `${fixture.ws}/a/../proj/**`,
        'proj/certs/',
        'proj//*.pem',
        '!proj/*.pem',
        'proj/!(x).pem',
        'proj/{a,b',
        'proj/[ab',
        '',
      ]) {
        const outcome = await call(
          'fs/readFile',
          { path: uri(join(proj, 'notes.txt')) },
          withGlob(fixture, pattern),
        );
        expect(outcome.error?.data.errorKind, pattern).toBe('invalid_params');
        if (pattern !== '')
          expect(outcome.error?.message, pattern).toContain(`deny glob \`${pattern}\` cannot be enforced`);
      }
    });
  });

  it('refuses the sandbox for a tree larger than the scan bound (pre-check off: the build refuses)', async () => {
    const wide = wideTree();
    const fixture = await createFixture(user);
    try {
      const before = await snapshotTree(fixture.base);
      const outcome = await callMethod(
        'fs/readFile',
        { path: uri(join(fixture.ws, 'hello.txt')), sandbox: withGlob(fixture, `${wide}/**/*.pem`) },
        { user, env: cliEnv(fixture), precheck: false },
      );
      expect(outcome.error?.data.errorKind).toBe('sandbox_unavailable');
      expect(outcome.error?.message).toContain('more than 20000 entries');
      expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
    } finally {
      await removeFixture(fixture);
    }
  });
});
