import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  EXECUTABLE_SURFACE,
  FsError,
  type HelperMethod,
  nativeToPathUri,
  type PathGuard,
  parseSandboxContext,
  resolveSandboxContext,
} from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { precheckPhysicalFor, precheckRequestFor } from './support/touched-paths.js';

const context = parseSandboxContext({
  permissions: {
    type: 'managed',
    file_system: {
      type: 'restricted',
      entries: [
        { path: { type: 'path', path: 'file:///r' }, access: 'read' },
        { path: { type: 'path', path: 'file:///w' }, access: 'write' },
        { path: { type: 'path', path: 'file:///w/.env' }, access: 'deny' },
      ],
    },
  },
});
const resolved = resolveSandboxContext(context, 'linux');
if (!resolved.sandboxed) throw new Error('expected a sandboxed context');
const profile = resolved.profile;

function refusal(operation: HelperMethod, params: Record<string, unknown>): FsError {
  try {
    precheckRequestFor(operation, params, profile, 'linux');
  } catch (error) {
    expect(error).toBeInstanceOf(FsError);
    return error as FsError;
  }
  throw new Error('expected a refusal');
}

describe('precheckRequest', () => {
  it('lets allowed reads and writes through', () => {
    expect(() => precheckRequestFor('fs/readFile', { path: 'file:///r/a' }, profile, 'linux')).not.toThrow();
    expect(() => precheckRequestFor('fs/writeFile', { path: 'file:///w/a' }, profile, 'linux')).not.toThrow();
    expect(() =>
      precheckRequestFor(
        'fs/copy',
        { sourcePath: 'file:///r/a', destinationPath: 'file:///w/b' },
        profile,
        'linux',
      ),
    ).not.toThrow();
  });

  it('names the rule for a path outside the roots', () => {
    const read = refusal('fs/readFile', { path: 'file:///etc/passwd' });
    expect([read.kind, read.message]).toEqual([
      'permission_denied',
      'cannot read /etc/passwd: outside readable roots',
    ]);
    const write = refusal('fs/createDirectory', { path: 'file:///r/new' });
    expect([write.kind, write.message]).toEqual([
      'permission_denied',
      'cannot write /r/new: outside writable roots',
    ]);
  });

  it('lets a read of what every sandbox shows to start a program through (the kernel allows it), never a write', () => {
    const runtime = {
      os: 'linux' as const,
      helperFiles: ['/opt/fs/helper.cjs'],
      minimalRootsPresent: ['/usr', '/etc'],
    };
    const read = (path: string) => () =>
      precheckRequestFor('fs/readFile', { path }, profile, 'linux', runtime);
    expect(read('file:///usr/bin/env')).not.toThrow();
    expect(read('file:///opt/fs/helper.cjs')).not.toThrow();
    expect(read('file:///etc/passwd')).toThrow(/outside readable roots/);
    expect(read('file:///opt/fs/other')).toThrow(/outside readable roots/);
    expect(() =>
      precheckRequestFor('fs/writeFile', { path: 'file:///usr/bin/x' }, profile, 'linux', runtime),
    ).toThrow(/outside writable roots/);
  });

  it('names the deny entry', () => {
    const error = refusal('fs/getMetadata', { path: 'file:///w/.env' });
    expect(error.kind).toBe('permission_denied');
    expect(error.message).toMatch(/^cannot read \/w\/\.env: denied by entry /);
  });

  it('refuses protected metadata, whether it exists or not', () => {
    const error = refusal('fs/writeFile', { path: 'file:///w/.git/hooks/pre-commit' });
    expect([error.kind, error.message]).toEqual([
      'protected_path',
      `cannot write /w/.git/hooks/pre-commit: protected metadata path .git (${EXECUTABLE_SURFACE[0]?.reason})`,
    ]);
    expect(refusal('fs/remove', { path: 'file:///w/.codex/config.toml' }).kind).toBe('protected_path');
    expect(refusal('fs/writeFile', { path: 'file:///w/sub/.git' }).kind).toBe('protected_path');
  });

  it('leaves the removal of a surface name itself to the helper (a planted link may be removed)', () => {
    expect(() =>
      precheckRequestFor('fs/remove', { path: 'file:///w/.codex' }, profile, 'linux'),
    ).not.toThrow();
  });

  it('checks both ends of a copy', () => {
    expect(
      refusal('fs/copy', { sourcePath: 'file:///etc/shadow', destinationPath: 'file:///w/x' }).message,
    ).toBe('cannot read /etc/shadow: outside readable roots');
    expect(refusal('fs/copy', { sourcePath: 'file:///r/a', destinationPath: 'file:///r/b' }).message).toBe(
      'cannot write /r/b: outside writable roots',
    );
  });

  it.each([
    ['fs/readDirectory', 'read'],
    ['fs/walk', 'read'],
    ['fs/canonicalize', 'read'],
    ['fs/openForRead', 'read'],
    ['fs/readRange', 'read'],
    ['fs/remove', 'write'],
  ] as const)('%s checks %s access', (operation, want) => {
    expect(refusal(operation, { path: 'file:///elsewhere' }).message).toBe(
      `cannot ${want} /elsewhere: outside ${want === 'read' ? 'readable' : 'writable'} roots`,
    );
  });
});

describe('precheckPhysical', () => {
  let base: string;
  let guard: PathGuard;
  const uri = (path: string): string => nativeToPathUri(path, 'linux');

  beforeAll(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'fs-precheck-')));
    mkdirSync(join(base, 'ws'));
    writeFileSync(join(base, 'ws', '.env'), 'secret');
    symlinkSync('.', join(base, 'ws', 'loop'));
    symlinkSync(join(base, 'ws'), join(base, 'ws', 'abs-loop'));
    symlinkSync('.env', join(base, 'ws', 'env-link'));
    const ws = join(base, 'ws');
    guard = {
      entries: [
        { path: ws, reason: 'writable_root', rule: 'writable root' },
        { path: join(ws, '.git'), reason: 'protected', rule: 'protected metadata path .git' },
        { path: join(ws, '.env'), reason: 'denied', rule: `denied path ${join(ws, '.env')}` },
      ],
      denyGlobs: [],
      deniedIdentities: [],
      surface: { entries: [...EXECUTABLE_SURFACE], home: null },
    };
  });

  afterAll(() => {
    rmSync(base, { recursive: true, force: true });
  });

  function physicalRefusal(operation: HelperMethod, params: Record<string, unknown>) {
    try {
      precheckPhysicalFor(operation, params, guard, 'linux');
    } catch (error) {
      expect(error).toBeInstanceOf(FsError);
      return error as FsError;
    }
    throw new Error('expected a refusal');
  }

  it('judges a write by where a loop-back link really leads', () => {
    for (const link of ['loop', 'abs-loop']) {
      const error = physicalRefusal('fs/copy', {
        sourcePath: uri('/usr'),
        destinationPath: uri(join(base, 'ws', link, '.git')),
        recursive: true,
      });
      expect(error.kind).toBe('protected_path');
      expect(error.message).toContain(`(it is ${join(base, 'ws', '.git')})`);
      expect(physicalRefusal('fs/writeFile', { path: uri(join(base, 'ws', link, '.env')) }).kind).toBe(
        'permission_denied',
      );
    }
  });

  it('refuses procfs aliases and reads that lead to a denied file', () => {
    for (const path of [`/proc/self/root${base}/ws/.env`, '/proc/self/fd/3', '/proc/1/cwd/x', '/dev/fd/3']) {
      expect(physicalRefusal('fs/readFile', { path: uri(path) }).message).toContain('procfs alias');
    }
    expect(physicalRefusal('fs/readFile', { path: uri(join(base, 'ws', 'env-link')) }).message).toContain(
      'leads to a denied path',
    );
  });

  it('lets a plain write inside the root, and the removal of a link, through', () => {
    expect(() =>
      precheckPhysicalFor('fs/writeFile', { path: uri(join(base, 'ws', 'a.txt')) }, guard, 'linux'),
    ).not.toThrow();
    expect(() =>
      precheckPhysicalFor('fs/remove', { path: uri(join(base, 'ws', 'env-link')) }, guard, 'linux'),
    ).not.toThrow();
  });
});
