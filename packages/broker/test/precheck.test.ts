import { FsError, parseSandboxContext, resolveSandboxContext } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import { precheckRequest } from '../src/precheck.js';

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

function refusal(operation: Parameters<typeof precheckRequest>[0], params: Record<string, unknown>): FsError {
  try {
    precheckRequest(operation, params, profile, 'linux');
  } catch (error) {
    expect(error).toBeInstanceOf(FsError);
    return error as FsError;
  }
  throw new Error('expected a refusal');
}

describe('precheckRequest', () => {
  it('lets allowed reads and writes through', () => {
    expect(() => precheckRequest('fs/readFile', { path: 'file:///r/a' }, profile, 'linux')).not.toThrow();
    expect(() => precheckRequest('fs/writeFile', { path: 'file:///w/a' }, profile, 'linux')).not.toThrow();
    expect(() =>
      precheckRequest(
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

  it('names the deny entry', () => {
    const error = refusal('fs/getMetadata', { path: 'file:///w/.env' });
    expect(error.kind).toBe('permission_denied');
    expect(error.message).toMatch(/^cannot read \/w\/\.env: denied by entry /);
  });

  it('refuses protected metadata, whether it exists or not', () => {
    const error = refusal('fs/writeFile', { path: 'file:///w/.git/hooks/pre-commit' });
    expect([error.kind, error.message]).toEqual([
      'protected_path',
      'cannot write /w/.git/hooks/pre-commit: protected metadata path .git',
    ]);
    expect(refusal('fs/remove', { path: 'file:///w/.codex' }).kind).toBe('protected_path');
  });

  it('checks both ends of a copy', () => {
    expect(
      refusal('fs/copy', { sourcePath: 'file:///etc/shadow', destinationPath: 'file:///w/x' }).message,
    ).toBe('cannot read /etc/shadow: outside readable roots');
    expect(refusal('fs/copy', { sourcePath: 'file:///r/a', destinationPath: 'file:///r/b' }).message).toBe(
      'cannot write /r/b: outside writable roots',
    );
  });

  it('refuses a recursive copy that would create a denied, read-only or protected path inside its destination', () => {
    const nested = resolveSandboxContext(
      parseSandboxContext({
        permissions: {
          type: 'managed',
          file_system: {
            type: 'restricted',
            entries: [
              { path: { type: 'path', path: 'file:///r' }, access: 'read' },
              { path: { type: 'path', path: 'file:///w' }, access: 'write' },
              { path: { type: 'path', path: 'file:///w/dst/x.key' }, access: 'deny' },
              { path: { type: 'path', path: 'file:///w/docs/ro' }, access: 'read' },
              { path: { type: 'path', path: 'file:///w/proj/inner' }, access: 'write' },
            ],
          },
        },
      }),
      'linux',
    );
    if (!nested.sandboxed) throw new Error('expected a sandboxed context');
    const copy = (destination: string, recursive: boolean) => () =>
      precheckRequest(
        'fs/copy',
        { sourcePath: 'file:///r/tree', destinationPath: destination, recursive },
        nested.profile,
        'linux',
      );
    expect(copy('file:///w/dst', true)).toThrow(
      /^cannot write \/w\/dst\/x\.key: denied by entry file:\/\/\/w\/dst\/x\.key:deny \(fs\/copy would create it inside \/w\/dst\)$/,
    );
    expect(copy('file:///w/docs', true)).toThrow(/^cannot write \/w\/docs\/ro: outside writable roots/);
    expect(copy('file:///w/proj', true)).toThrow(
      /^cannot write \/w\/proj\/inner\/\.git: protected metadata path \.git/,
    );
    expect(copy('file:///w/other', true)).not.toThrow();
    // A file copy creates nothing below its destination.
    expect(copy('file:///w/dst', false)).not.toThrow();
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
