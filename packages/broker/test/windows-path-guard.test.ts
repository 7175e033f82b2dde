import { parseSandboxContext, resolveSandboxContext } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import {
  assertPlainWindowsPath,
  assertPlainWindowsPlanPath,
  windowsPathAliasProblem,
} from '../src/backends/windows/windows-path-guard.js';
import { precheckRequestFor } from './support/touched-paths.js';

describe('Windows path alias guard', () => {
  it('accepts plain drive paths, including names that merely contain dots, spaces or tildes', () => {
    for (const path of [
      'C:\\w\\.git',
      'C:\\w\\src\\main.ts',
      'd:/w/a b/c',
      'C:\\Program Files\\node\\node.exe',
      'C:\\w\\backup~old.txt',
      'C:\\w\\file~1-long-name.txt',
      'C:\\w\\console.log.txt',
      'C:\\w\\COM10',
      'C:\\',
    ]) {
      expect(windowsPathAliasProblem(path), path).toBeNull();
    }
  });

  it('refuses 8.3 short names', () => {
    for (const path of ['C:\\PROGRA~1\\x', 'C:\\w\\GIT~1\\config', 'C:\\w\\AB12~1.TXT', 'C:\\w\\x~12']) {
      expect(windowsPathAliasProblem(path), path).toMatch(/8\.3 short name/);
    }
  });

  it('refuses trailing dots and spaces, which Windows strips', () => {
    for (const path of ['C:\\w\\.git.', 'C:\\w\\.git \\config', 'C:\\w\\secret...', 'C:\\w\\x. ']) {
      expect(windowsPathAliasProblem(path), path).toMatch(/trailing dots and spaces/);
    }
  });

  it('refuses alternate data streams: any colon after the drive', () => {
    for (const path of ['C:\\w\\file::$DATA', 'C:\\w\\.git:stream', 'C:\\w\\dir:$I30:$INDEX_ALLOCATION\\x']) {
      expect(windowsPathAliasProblem(path), path).toMatch(/alternate data streams/);
    }
  });

  it('refuses reserved device names, with any extension and case', () => {
    for (const path of [
      'C:\\w\\NUL',
      'C:\\w\\nul.txt',
      'C:\\w\\CON',
      'C:\\w\\aux.tar.gz',
      'C:\\w\\com1',
      'C:\\w\\LPT9.log',
      'C:\\w\\COM¹',
      'C:\\w\\NUL .txt',
      'C:\\w\\conin$',
      'C:\\w\\sub\\prn\\x',
    ]) {
      expect(windowsPathAliasProblem(path), path).toMatch(/reserved device names/);
    }
  });

  it('refuses the device, verbatim and UNC namespaces', () => {
    expect(windowsPathAliasProblem('\\\\?\\C:\\w\\.git')).toMatch(/namespace/);
    expect(windowsPathAliasProblem('\\\\.\\C:\\w')).toMatch(/namespace/);
    expect(windowsPathAliasProblem('//?/C:/w')).toMatch(/namespace/);
    expect(windowsPathAliasProblem('\\??\\C:\\w')).toMatch(/namespace/);
    expect(windowsPathAliasProblem('\\\\server\\share\\w')).toMatch(/UNC/);
  });

  it('refuses relative paths, relative components and characters Windows forbids', () => {
    expect(windowsPathAliasProblem('w\\x')).toMatch(/absolute/);
    expect(windowsPathAliasProblem('C:w')).toMatch(/absolute/);
    expect(windowsPathAliasProblem('C:\\w\\..\\.git')).toMatch(/relative components/);
    expect(windowsPathAliasProblem('C:\\w\\a*b')).toMatch(/does not allow/);
    expect(windowsPathAliasProblem('C:\\w\\a\u0001b')).toMatch(/does not allow/);
  });

  it('maps request aliases to permission_denied and plan aliases to sandbox_unavailable', () => {
    expect(() => assertPlainWindowsPath('C:\\w\\GIT~1\\config')).toThrow(
      expect.objectContaining({ kind: 'permission_denied', message: expect.stringContaining('GIT~1') }),
    );
    expect(() => assertPlainWindowsPath('C:\\w\\ok.txt')).not.toThrow();
    expect(() => assertPlainWindowsPlanPath('C:\\w\\.git.', 'writable root')).toThrow(
      expect.objectContaining({
        kind: 'sandbox_unavailable',
        message: expect.stringContaining('writable root'),
      }),
    );
  });
});

describe('the broker pre-check on Windows', () => {
  const context = parseSandboxContext({
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [
          { path: { type: 'special', value: { kind: 'root' } }, access: 'read' },
          { path: { type: 'path', path: 'file:///C:/w' }, access: 'write' },
        ],
      },
    },
    windowsSandboxLevel: 'restricted-token',
  });
  const resolved = resolveSandboxContext(context, 'windows');
  if (!resolved.sandboxed) throw new Error('expected a sandboxed context');

  it('refuses an alias spelling of .git that the policy rules would not recognise', () => {
    expect(() =>
      precheckRequestFor('fs/writeFile', { path: 'file:///C:/w/GIT~1/config' }, resolved.profile, 'windows'),
    ).toThrow(
      expect.objectContaining({ kind: 'permission_denied', message: expect.stringContaining('8.3') }),
    );
    expect(() =>
      precheckRequestFor('fs/writeFile', { path: 'file:///C:/w/src/a.ts' }, resolved.profile, 'windows'),
    ).not.toThrow();
  });
});
