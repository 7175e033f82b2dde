import type { SandboxPlan } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import type { HelperRuntime } from '../src/backends/backend.js';
import { launchCommand } from '../src/backends/launch-command.js';
import { buildSeatbeltLaunch } from '../src/backends/macos/seatbelt-launch.js';
import {
  buildSeatbeltProfile,
  SEATBELT_PLATFORM_LITERALS,
  SEATBELT_SYSCTL_NAMES,
  SEATBELT_SYSCTL_PREFIXES,
} from '../src/backends/macos/seatbelt-profile.js';
import { emptyPlan } from './support/plans.js';

const RUNTIME: HelperRuntime = {
  executable: { kind: 'node', path: '/opt/homebrew/Cellar/node/20.11.0/bin/node' },
  helperBundle: '/Users/dev/fs-sandbox/packages/helper/dist/helper.cjs',
  ripgrepPath:
    '/Users/dev/fs-sandbox/node_modules/.pnpm/@vscode+ripgrep-darwin-arm64@1.18.0/node_modules/@vscode/ripgrep-darwin-arm64/bin/rg',
  env: { PATH: '/usr/bin:/bin', TMPDIR: '/var/folders/xy/abc/T/' },
};

const MINIMAL = ['/System/Library', '/usr/lib', '/usr/share'];
const HELPER_FILES = [RUNTIME.executable.path, RUNTIME.helperBundle];
const WORK = '/Users/dev/work';
const PROTECTED = ['.git', '.agents', '.codex'];

function plan(overrides: Partial<SandboxPlan>): SandboxPlan {
  return emptyPlan('macos', { cwd: WORK, ...overrides });
}

const PLANS: Record<string, SandboxPlan> = {
  'read-only': plan({ readableRoots: [...MINIMAL, ...HELPER_FILES, WORK] }),
  'full-disk-read': plan({ fullDiskRead: true }),
  'workspace-write-git': plan({
    fullDiskRead: true,
    writableRoots: [
      { root: '/tmp/scratch', readOnlySubpaths: [], protectedNames: [] },
      { root: WORK, readOnlySubpaths: [], protectedNames: PROTECTED },
    ],
  }),
  'deny-entries': plan({
    readableRoots: [...MINIMAL, ...HELPER_FILES, '/Users/dev/shared'],
    writableRoots: [
      { root: WORK, readOnlySubpaths: [`${WORK}/docs/frozen`], protectedNames: PROTECTED },
      { root: `${WORK}/docs/frozen/drafts`, readOnlySubpaths: [], protectedNames: [] },
    ],
    deniedPaths: [`${WORK}/.env`, '/Users/dev/shared/Café', `${WORK}/docs/secret`],
    denyGlobs: [`${WORK}/**/*.pem`],
  }),
};

/** Every `"…"` string literal of a profile (comments stripped). */
function stringLiterals(text: string): string[] {
  const code = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith(';'))
    .join('\n');
  return [...code.matchAll(/"([^"]*)"/g)].map((match) => match[1] as string);
}

function parenthesesBalance(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (const line of text.split('\n')) {
    if (line.trimStart().startsWith(';')) continue;
    for (const char of line) {
      if (char === '"') inString = !inString;
      else if (!inString && char === '(') depth += 1;
      else if (!inString && char === ')') depth -= 1;
      if (depth < 0) return false;
    }
  }
  return depth === 0 && !inString;
}

function pathsOf(p: SandboxPlan): string[] {
  return [
    ...p.readableRoots,
    ...p.deniedPaths,
    ...p.denyGlobs,
    ...p.writableRoots.flatMap((w) => [w.root, ...w.readOnlySubpaths]),
    ...HELPER_FILES,
  ];
}

describe('Seatbelt profile golden files', () => {
  for (const [name, p] of Object.entries(PLANS)) {
    it(`${name}: profile text and parameters match the reviewed golden files`, async () => {
      const profile = buildSeatbeltProfile(p, RUNTIME);
      await expect(profile.text).toMatchFileSnapshot(`./golden/seatbelt-${name}.sb`);
      await expect(`${JSON.stringify(Object.fromEntries(profile.params), null, 2)}\n`).toMatchFileSnapshot(
        `./golden/seatbelt-${name}.params.json`,
      );
    });
  }
});

describe('Seatbelt profile structure', () => {
  const allowedLiterals = new Set<string>([
    ...Object.values(SEATBELT_PLATFORM_LITERALS).flat(),
    ...SEATBELT_SYSCTL_NAMES,
    ...SEATBELT_SYSCTL_PREFIXES,
  ]);

  for (const [name, p] of Object.entries(PLANS)) {
    it(`${name}: deny-default, balanced, every parameter defined and used, no path text in the profile`, () => {
      const { text, params } = buildSeatbeltProfile(p, RUNTIME);
      expect(text.startsWith('(version 1)\n(deny default)\n')).toBe(true);
      expect(parenthesesBalance(text)).toBe(true);

      const referenced = new Set([...text.matchAll(/\(param "([A-Z0-9_]+)"\)/g)].map((m) => m[1]));
      const defined = new Set(params.map(([key]) => key));
      expect([...referenced].sort()).toEqual([...defined].sort());

      for (const literal of stringLiterals(text)) {
        if (referenced.has(literal)) continue;
        expect(allowedLiterals, `unexpected literal "${literal}"`).toContain(literal);
      }
      // With the platform literals blanked out, no plan path may remain anywhere (comments included).
      const blanked = text.replace(/"([^"]*)"/g, (quoted, inner: string) =>
        allowedLiterals.has(inner) ? '""' : quoted,
      );
      for (const path of pathsOf(p)) expect(blanked).not.toContain(path);
    });
  }

  it('passes every parameter as -D KEY=VALUE and runs node on the helper after --', () => {
    const p = PLANS['deny-entries'] as SandboxPlan;
    const launch = buildSeatbeltLaunch(p, RUNTIME);
    const { text, params } = buildSeatbeltProfile(p, RUNTIME);
    expect(launch.sandboxProgram).toBe('/usr/bin/sandbox-exec');
    expect(launch.sandboxArgs.slice(0, 2)).toEqual(['-p', text]);
    const defines = launch.sandboxArgs.slice(2, 2 + params.length * 2);
    expect(defines).toEqual(params.flatMap(([key, value]) => ['-D', `${key}=${value}`]));
    expect(launch.sandboxArgs.slice(2 + params.length * 2)).toEqual(['--']);
    expect(launchCommand(launch).args.slice(2 + params.length * 2)).toEqual([
      '--',
      RUNTIME.executable.path,
      '--openssl-config=/dev/null',
      RUNTIME.helperBundle,
    ]);
    // Seatbelt mounts nothing: no mount check for the helper, no roots for the pool to compare.
    expect([launch.mountPoints, launch.boundRoots]).toEqual([[], []]);
    expect(launch.env).toEqual(RUNTIME.env);
    expect(launch.details).toEqual({ profile: text, params: Object.fromEntries(params) });
  });
});

describe('Seatbelt profile rules', () => {
  const denyEntries = buildSeatbeltProfile(PLANS['deny-entries'] as SandboxPlan, RUNTIME);
  const param = (key: string) => new Map(denyEntries.params).get(key);

  it('resolves the /tmp, /var and /etc aliases to their /private targets', () => {
    const { params } = buildSeatbeltProfile(
      plan({
        readableRoots: ['/etc/ssl', '/var/db/timezone'],
        writableRoots: [{ root: '/tmp/out', readOnlySubpaths: [], protectedNames: [] }],
      }),
      { ...RUNTIME, helperBundle: '/tmp/helper.cjs' },
    );
    const values = new Map(params);
    expect(values.get('READABLE_ROOT_0')).toBe('/private/etc/ssl');
    expect(values.get('READABLE_ROOT_1')).toBe('/private/var/db/timezone');
    expect(values.get('WRITABLE_ROOT_0')).toBe('/private/tmp/out');
    expect(values.get('HELPER_BUNDLE')).toBe('/private/tmp/helper.cjs');
  });

  it('keeps denied paths out of the read rule of the root that contains them, under every spelling', () => {
    expect(param('DENIED_1')).toBe('/Users/dev/shared/Café');
    const regex = new RegExp(param('DENIED_1_SPELLINGS') as string);
    for (const spelling of ['Café', 'Cafe\u0301', 'CAFÉ', 'CAFE\u0301', 'café']) {
      expect(regex.test(`/Users/dev/shared/${spelling}/notes.txt`), spelling).toBe(true);
      expect(regex.test(`/users/DEV/shared/${spelling}`), spelling).toBe(true);
    }
    expect(regex.test('/Users/dev/shared/Cafe')).toBe(false);
    expect(regex.test('/Users/dev/shared/Café2')).toBe(false);
    const sharedRule = denyEntries.text
      .split('(require-all')
      .find((chunk) => chunk.startsWith(' (subpath (param "READABLE_ROOT_5"))')) as string;
    expect(param('READABLE_ROOT_5')).toBe('/Users/dev/shared');
    expect(sharedRule).toContain('(require-not (subpath (param "DENIED_1")))');
    expect(sharedRule).toContain('(require-not (regex (param "DENIED_1_SPELLINGS")))');
    expect(sharedRule).not.toContain('DENIED_0');
  });

  it('keeps read-only subpaths, protected names and denied paths out of the write rule', () => {
    const writeRule = denyEntries.text.slice(denyEntries.text.indexOf('(allow file-write*'));
    const firstRoot = writeRule.slice(0, writeRule.indexOf('(subpath (param "WRITABLE_ROOT_1"))'));
    for (const key of [
      'WRITABLE_ROOT_0_READ_ONLY_0',
      'WRITABLE_ROOT_0_PROTECTED_0',
      'DENIED_0',
      'DENIED_2',
    ]) {
      expect(firstRoot).toContain(`(require-not (literal (param "${key}")))`);
      expect(firstRoot).toContain(`(require-not (regex (param "${key}_SPELLINGS")))`);
    }
    expect(firstRoot).toContain('(require-not (regex (param "DENY_GLOB_0")))');
    expect(param('WRITABLE_ROOT_0_PROTECTED_0')).toBe(`${WORK}/.git`);
    const git = new RegExp(param('WRITABLE_ROOT_0_PROTECTED_0_SPELLINGS') as string);
    expect(git.test(`${WORK}/.GIT/config`)).toBe(true);
    expect(git.test(`${WORK}/.Git`)).toBe(true);
    expect(git.test(`${WORK}/.github/workflows`)).toBe(false);
    expect(git.test(`${WORK}/sub/.git`)).toBe(false);
  });

  it('forbids renaming away a writable root or a directory that holds a kept-out path', () => {
    const unlinkRule = denyEntries.text.slice(denyEntries.text.indexOf('(deny file-write-unlink'));
    const literalsInRule = [...unlinkRule.matchAll(/\(literal \(param "([A-Z0-9_]+)"\)\)/g)].map((m) =>
      param(m[1] as string),
    );
    expect(literalsInRule).toEqual([WORK, `${WORK}/docs`, `${WORK}/docs/frozen/drafts`]);
    const rootSpellings = new RegExp(param('WRITABLE_ROOT_0_SPELLINGS_EXACT') as string);
    expect(rootSpellings.test('/users/dev/WORK')).toBe(true);
    expect(rootSpellings.test(`${WORK}/x`)).toBe(false);
  });

  it('denies hard links and the network after every allow, so no allow can reopen them', () => {
    const text = denyEntries.text;
    const lastAllow = text.lastIndexOf('(allow ');
    expect(text.indexOf('(deny file-link)')).toBeGreaterThan(lastAllow);
    expect(text.indexOf('(deny network*)')).toBeGreaterThan(lastAllow);
    expect(text).not.toMatch(/\(allow network/);
  });

  it('lets the helper execute exactly node and the ripgrep binary, and fork only when ripgrep is there', () => {
    const execs = [...denyEntries.text.matchAll(/\(allow process-exec \(literal \(param "([A-Z_]+)"\)\)\)/g)];
    expect(execs.map((m) => m[1])).toEqual(['NODE_PATH', 'RIPGREP']);
    expect(param('RIPGREP')).toBe(RUNTIME.ripgrepPath);
    expect(denyEntries.text).toMatch(/\(allow process-fork\)/);
    const withoutRipgrep = buildSeatbeltProfile(PLANS['deny-entries'] as SandboxPlan, {
      ...RUNTIME,
      ripgrepPath: null,
    });
    expect(withoutRipgrep.text).not.toMatch(/process-fork|RIPGREP/);
  });

  it('grants no scratch space: nothing outside the writable roots is writable', () => {
    const { text } = buildSeatbeltProfile(PLANS['full-disk-read'] as SandboxPlan, RUNTIME);
    expect(text).not.toContain('(allow file-write*');
    expect(text).not.toMatch(/\(subpath "\/(private\/)?(tmp|var)/);
    expect(text).toMatch(
      /\(allow file-write-data\n {2}\(literal "\/dev\/null"\)\n {2}\(literal "\/dev\/dtracehelper"\)\)/,
    );
  });

  it('refuses a path that is not valid UTF-8 instead of naming another file', () => {
    const bad = plan({ readableRoots: ['/Users/dev/bad\uDCFFname'] });
    expect(() => buildSeatbeltProfile(bad, RUNTIME)).toThrow(
      expect.objectContaining({
        kind: 'sandbox_unavailable',
        message: expect.stringContaining('not valid UTF-8'),
      }),
    );
  });
});
