import { describe, expect, it } from 'vitest';
import { mcpSandboxContext } from '../src/mcp/sandbox-context.js';

describe('mcpSandboxContext', () => {
  it('writes the allowed directories and reads nothing else but the minimal roots', () => {
    const context = mcpSandboxContext({
      directories: ['/w/a', '/w/b'],
      readOnly: false,
      deny: [],
      os: 'linux',
    });
    expect(context.permissions).toMatchObject({
      file_system: {
        entries: [
          { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' },
          { path: { type: 'path', path: 'file:///etc' }, access: 'deny' },
          { path: { type: 'path', path: 'file:///w/a' }, access: 'write' },
          { path: { type: 'path', path: 'file:///w/b' }, access: 'write' },
        ],
      },
    });
    expect(context.cwd).toBe('file:///w/a');
  });

  it('with readOnly, reads the directories and writes nothing; deny paths and globs narrow it', () => {
    const context = mcpSandboxContext({
      directories: ['/w/a'],
      readOnly: true,
      deny: ['secret.env', '**/*.pem'],
      os: 'linux',
    });
    const entries = (context.permissions as { file_system: { entries: { access: string }[] } }).file_system
      .entries;
    expect(entries).toEqual([
      { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' },
      { path: { type: 'path', path: 'file:///etc' }, access: 'deny' },
      { path: { type: 'path', path: 'file:///w/a' }, access: 'read' },
      { path: { type: 'path', path: 'file:///w/a/secret.env' }, access: 'deny' },
      { path: { type: 'glob_pattern', pattern: '**/*.pem' }, access: 'deny' },
    ]);
    expect(entries.some((entry) => entry.access === 'write')).toBe(false);
  });

  it('keeps the host configuration unreadable unless an allowed directory holds it', () => {
    const denied = (directories: string[], os: 'linux' | 'macos') =>
      JSON.stringify(mcpSandboxContext({ directories, readOnly: false, deny: [], os })).includes(
        'etc"},"access":"deny"',
      );
    expect(denied(['/w'], 'linux')).toBe(true);
    expect(denied(['/w'], 'macos')).toBe(true);
    expect(denied(['/'], 'linux')).toBe(false);
    expect(denied(['/etc'], 'linux')).toBe(false);
    // A directory inside it is a deeper entry, which wins over the deny.
    expect(denied(['/etc/app'], 'linux')).toBe(true);
  });

  it('makes --read-only-dir directories read roots where they meet the allowed directories, and a directory inside one read-only', () => {
    const entries = (
      mcpSandboxContext({
        directories: ['/w/a', '/w/ro', '/w/ro/inner'],
        readOnlyDirectories: ['/w/ro', '/w/a/docs', '/elsewhere'],
        readOnly: false,
        deny: [],
        os: 'linux',
      }).permissions as { file_system: { entries: { path: { path?: string }; access: string }[] } }
    ).file_system.entries;
    const byAccess = (access: string) =>
      entries
        .filter((entry) => entry.access === access && entry.path.path?.startsWith('file:///w'))
        .map((entry) => entry.path.path);
    expect(byAccess('write')).toEqual(['file:///w/a']);
    expect(byAccess('read').sort()).toEqual(['file:///w/a/docs', 'file:///w/ro', 'file:///w/ro/inner']);
    // A marking outside every directory in force grants nothing.
    expect(JSON.stringify(entries)).not.toContain('elsewhere');
  });
});
