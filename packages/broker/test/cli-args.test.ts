import { PassThrough, Readable } from 'node:stream';
import { FsError } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import type { BrokerOptions, FsBroker } from '../src/broker.js';
import { FS_METHODS } from '../src/broker-api.js';
import type { CliDeps } from '../src/cli/cli-io.js';
import { writeResultJson } from '../src/cli/json-output.js';
import { buildProgram } from '../src/cli/main.js';
import { formatCommand, shellQuote } from '../src/cli/shell-quote.js';

interface Recorded {
  options: BrokerOptions[];
  calls: { method: string; params: Record<string, unknown>; timeoutMs: number | undefined }[];
}

/** Runs the CLI with a recording broker; `respond` scripts what broker.call does. */
async function runCli(
  argv: string[],
  respond: (method: string, params: Record<string, unknown>) => unknown = () => ({}),
  stdinText = '',
) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('latin1');
  });
  stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString('latin1');
  });
  const recorded: Recorded = { options: [], calls: [] };
  let exitCode = 0;
  const broker: FsBroker = {
    async call(method, params, options) {
      recorded.calls.push({
        method,
        params: params as Record<string, unknown>,
        timeoutMs: options?.timeoutMs,
      });
      return respond(method, params as Record<string, unknown>) as never;
    },
    async callWithInfo(method, params, options) {
      return {
        result: await this.call(method, params as never, options),
        info: { sandboxed: false, backend: null },
      };
    },
    async prepareSandbox() {
      return {
        plan: {
          os: 'linux',
          fullDiskRead: true,
          readableRoots: [],
          writableRoots: [],
          deniedPaths: [],
          denyGlobs: [],
          cwd: null,
        },
        launch: {
          backend: 'bwrap',
          sandboxProgram: '/usr/bin/bwrap',
          sandboxArgs: ['--tmpfs', '/', '--'],
          runtime: '/usr/bin/node',
          runtimeArgs: [],
          helper: 'h.cjs',
          helperArgs: [],
          mountPoints: [],
          boundRoots: [],
          env: {},
        },
        guard: { entries: [], denyGlobs: [], deniedIdentities: [] },
      };
    },
    poolStats: () => null,
    async close() {},
  };
  const deps: CliDeps = {
    io: {
      stdout,
      stderr,
      stdin: Readable.from([Buffer.from(stdinText)]),
      env: { PATH: '/usr/bin' },
      cwd: '/home/u/project',
    },
    createBroker: (options) => {
      recorded.options.push(options);
      return broker;
    },
    setExitCode: (code) => {
      exitCode = code;
    },
  };
  try {
    await buildProgram(deps).parseAsync(argv, { from: 'user' });
  } catch (error) {
    exitCode = (error as { exitCode?: number }).exitCode === 0 ? 0 : 2;
  }
  return { stdout: out, stderr: err, exitCode, recorded };
}

describe('fs-sandbox call', () => {
  it('passes method and params through and prints the result', async () => {
    const params = { path: 'file:///w/a', sandbox: null };
    const run = await runCli(['call', 'fs/getMetadata', JSON.stringify(params)], () => ({ isFile: true }));
    expect(run.recorded.calls).toEqual([{ method: 'fs/getMetadata', params, timeoutMs: undefined }]);
    expect(run.stdout).toBe('{"isFile":true}\n');
    expect(run.exitCode).toBe(0);
  });

  it('reads params from stdin with -', async () => {
    const run = await runCli(['call', 'fs/readFile', '-'], () => ({}), '{"path":"file:///x"}');
    expect(run.recorded.calls[0]?.params).toEqual({ path: 'file:///x' });
  });

  it('prints binary result fields as base64', async () => {
    const run = await runCli(['call', 'fs/readFile', '{"path":"file:///x"}'], () => ({
      dataBase64: Buffer.from('hello sandbox\n'),
    }));
    expect(run.stdout).toBe('{"dataBase64":"aGVsbG8gc2FuZGJveAo="}\n');
  });

  it('prints errors as {"error":…} on stdout with exit 1', async () => {
    const run = await runCli(['call', 'fs/readFile', '{"path":"file:///x"}'], () => {
      throw new FsError('not_found', 'No such file or directory (os error 2)');
    });
    expect(JSON.parse(run.stdout)).toEqual({
      error: {
        code: -32004,
        message: 'No such file or directory (os error 2)',
        data: { errorKind: 'not_found' },
      },
    });
    expect(run.exitCode).toBe(1);
  });

  it('refuses unparsable params and unknown methods without calling the broker', async () => {
    const bad = await runCli(['call', 'fs/readFile', '{nope']);
    expect(JSON.parse(bad.stdout).error.data.errorKind).toBe('invalid_request');
    expect(bad.exitCode).toBe(1);
    const unknown = await runCli(['call', 'fs/frobnicate', '{}']);
    expect(JSON.parse(unknown.stdout).error.message).toBe(
      `unknown method \`fs/frobnicate\`; one of ${FS_METHODS.join(', ')}`,
    );
    expect(bad.recorded.calls).toHaveLength(0);
    expect(unknown.recorded.calls).toHaveLength(0);
  });

  it('turns --timeout and --no-precheck into broker options', async () => {
    const run = await runCli([
      'call',
      '--timeout',
      '500',
      '--no-precheck',
      'fs/readFile',
      '{"path":"file:///x"}',
    ]);
    expect(run.recorded.options[0]).toMatchObject({
      precheck: false,
      timeoutMs: 500,
      env: { PATH: '/usr/bin' },
    });
    expect(run.recorded.calls[0]?.timeoutMs).toBe(500);
    expect((await runCli(['call', 'fs/readFile', '{}'])).recorded.options[0]?.precheck).toBe(true);
  });

  it('turns --require-sandbox into a broker option, off by default', async () => {
    const required = await runCli(['call', '--require-sandbox', 'fs/readFile', '{"path":"file:///x"}']);
    expect(required.recorded.options[0]?.requireSandbox).toBe(true);
    expect((await runCli(['call', 'fs/readFile', '{}'])).recorded.options[0]?.requireSandbox).toBe(false);
  });

  it('rejects a bad --timeout as a usage error', async () => {
    expect((await runCli(['call', '--timeout', 'soon', 'fs/readFile', '{}'])).exitCode).toBe(2);
  });
});

describe('shortcut commands', () => {
  const ROOT_READ = { path: { type: 'special', value: { kind: 'root' } }, access: 'read' };

  it('builds a workspace-write context from the profile flags, with native paths as URIs', async () => {
    const run = await runCli(
      ['cat', '--profile', 'workspace-write', '--cwd', '/w', '--deny', 'secret', 'notes.txt'],
      () => ({ dataBase64: Buffer.from('text') }),
    );
    expect(run.stdout).toBe('text');
    expect(run.recorded.calls[0]).toEqual({
      method: 'fs/readFile',
      timeoutMs: undefined,
      params: {
        path: 'file:///home/u/project/notes.txt',
        sandbox: {
          permissions: {
            type: 'managed',
            file_system: {
              type: 'restricted',
              entries: [
                ROOT_READ,
                { path: { type: 'path', path: 'file:///w' }, access: 'write' },
                { path: { type: 'path', path: 'file:///home/u/project/secret' }, access: 'deny' },
              ],
            },
            network: 'restricted',
          },
          cwd: 'file:///w',
          workspaceRoots: ['file:///w'],
          windowsSandboxLevel: 'disabled',
        },
      },
    });
  });

  it('read-only has no writable root; --writable-root implies workspace-write', async () => {
    const readOnly = await runCli(['stat', '--profile', 'read-only', '/etc'], () => ({}));
    const sandbox = readOnly.recorded.calls[0]?.params.sandbox as {
      permissions: { file_system: { entries: unknown[] } };
    };
    expect(sandbox.permissions.file_system.entries).toEqual([ROOT_READ]);

    const implied = await runCli(['write', '--writable-root', '/out', '/out/a', 'hi']);
    const params = implied.recorded.calls[0]?.params as {
      dataBase64: string;
      mode: string;
      sandbox: { permissions: { file_system: { entries: unknown[] } } };
    };
    expect(params.dataBase64).toBe(Buffer.from('hi').toString('base64'));
    expect(params.mode).toBe('overwrite');
    expect(params.sandbox.permissions.file_system.entries[1]).toEqual({
      path: { type: 'path', path: 'file:///out' },
      access: 'write',
    });
  });

  it('runs without a sandbox when no context flag is given', async () => {
    const run = await runCli(['rm', '-r', 'build']);
    expect(run.recorded.calls[0]?.params).toEqual({
      path: 'file:///home/u/project/build',
      recursive: true,
      force: false,
      sandbox: null,
    });
  });

  it('accepts a full --sandbox JSON context', async () => {
    const context = { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' };
    const run = await runCli(['cp', '-r', '--sandbox', JSON.stringify(context), 'a', 'b']);
    expect(run.recorded.calls[0]?.params).toEqual({
      sourcePath: 'file:///home/u/project/a',
      destinationPath: 'file:///home/u/project/b',
      recursive: true,
      sandbox: context,
    });
  });

  it('reports bad flag combinations as one line on stderr with exit 1', async () => {
    const run = await runCli(['cat', '--deny', 'x', 'a']);
    expect(run.stderr).toBe('fs-sandbox: --cwd and --deny need --profile [invalid_params]\n');
    expect(run.exitCode).toBe(1);
    expect(run.recorded.calls).toHaveLength(0);
    const both = await runCli(['cat', '--profile', 'read-only', '--sandbox', '{}', 'a']);
    expect(both.stderr).toBe(
      'fs-sandbox: --sandbox cannot be combined with the profile flags [invalid_params]\n',
    );
  });

  it('lists directories sorted with a / after directory names', async () => {
    const run = await runCli(['ls', 'src'], () => ({
      entries: [
        { fileName: 'b.ts', isDirectory: false, isFile: true },
        { fileName: 'a', isDirectory: true, isFile: false },
      ],
    }));
    expect(run.stdout).toBe('a/\nb.ts\n');
  });

  it('refuses an unknown profile and an unknown command as usage errors', async () => {
    expect((await runCli(['cat', '--profile', 'yolo', 'a'])).exitCode).toBe(2);
    expect((await runCli(['frobnicate'])).exitCode).toBe(2);
  });
});

describe('explain output', () => {
  it('prints the launch as a shell command that quotes exactly', async () => {
    const run = await runCli(['explain', '--profile', 'read-only']);
    expect(run.stdout).toBe(
      '# backend: bwrap (linux)\n/usr/bin/bwrap \\\n  --tmpfs / \\\n  -- /usr/bin/node h.cjs\n',
    );
  });

  it('quotes shell metacharacters', () => {
    expect(shellQuote("/w/it's here")).toBe(`'/w/it'\\''s here'`);
    expect(shellQuote('/usr/bin')).toBe('/usr/bin');
    expect(formatCommand('bwrap', ['--setenv', 'PATH', 'a b', '--', 'node', '--x'])).toBe(
      "bwrap \\\n  --setenv PATH 'a b' \\\n  -- node --x",
    );
  });

  it('explains another platform with its pure builder and states what it assumes', async () => {
    const context = {
      permissions: {
        type: 'managed',
        file_system: {
          type: 'restricted',
          entries: [{ path: { type: 'path', path: 'file:///Users/me/w' }, access: 'write' }],
        },
      },
      cwd: 'file:///Users/me/w',
    };
    const run = await runCli(['explain', '--platform', 'macos', JSON.stringify(context)]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/^# backend: seatbelt \(macos\)\n# assumed: runtime paths are assumed/);
    // The profile's newlines are quoted as escapes in the command; the profile itself follows in full.
    expect(run.stdout).toContain("/usr/bin/sandbox-exec -p $'(version 1)\\x0a");
    expect(run.stdout).toContain('# profile:\n(version 1)\n');
    expect(run.stdout).toContain('WRITABLE_ROOT_0=/Users/me/w');
    // Built by the runner's own preparation, with that host's machine checks stated as assumed.
    expect(run.stdout).toContain('# assumed: /usr/bin/sandbox-exec is assumed to be there\n');
    expect(run.stdout).toContain('# assumed: no writable root is assumed to hold a `.git` pointer file');
  });

  it('shows why a Windows level refuses a policy', async () => {
    const context = {
      permissions: {
        type: 'managed',
        file_system: {
          type: 'restricted',
          entries: [{ path: { type: 'path', path: 'file:///C:/w' }, access: 'read' }],
        },
      },
      windowsSandboxLevel: 'restricted-token',
    };
    const readRestricted = await runCli(['explain', '--platform', 'windows', JSON.stringify(context)]);
    expect(readRestricted.exitCode).toBe(1);
    expect(readRestricted.stderr).toMatch(
      /write-restricted token cannot enforce read restrictions.*\[sandbox_unavailable\]/,
    );
    const unrestricted = await runCli([
      'explain',
      '--platform',
      'windows',
      '--profile',
      'workspace-write',
      '--cwd',
      'C:\\w',
    ]);
    expect(unrestricted.exitCode).toBe(0);
    expect(unrestricted.stdout).toMatch(/^# backend: restricted-token \(windows\)/);
    // The launcher gets the plan, then the helper's command line.
    expect(unrestricted.stdout).toMatch(/'C:\\Program Files\\nodejs\\node\.exe' '[^']*helper\.cjs'\n/);
  });
});

describe('writeResultJson', () => {
  it('streams a large binary field as base64 without one giant string', () => {
    const out = new PassThrough();
    const parts: string[] = [];
    out.on('data', (chunk) => parts.push(chunk.toString()));
    const data = Buffer.alloc(7 * 1024 * 1024 + 1, 0xab);
    writeResultJson(out, { dataBase64: data, extra: 1 });
    const text = parts.join('');
    const parsed = JSON.parse(text);
    expect(parsed.dataBase64).toBe(data.toString('base64'));
    expect(parsed.extra).toBe(1);
    expect(Math.max(...parts.map((part) => part.length))).toBeLessThan(data.length);
  });
});

describe('human output of ls -l, stat, walk, mkdir and --json', () => {
  // Local time, so the expected strings do not depend on the test machine's time zone.
  const at = new Date(2026, 0, 2, 3, 4, 59).getTime();
  const meta = (over: Partial<Record<string, unknown>> = {}) => ({
    isDirectory: false,
    isFile: true,
    isSymlink: false,
    size: 12,
    createdAtMs: at,
    modifiedAtMs: at,
    ...over,
  });

  it('ls -l marks files, directories and symlinks, with the resolved path of a link', async () => {
    const run = await runCli(['ls', '-l', 'd'], (method, params) => {
      if (method === 'fs/readDirectory') {
        return {
          entries: [
            { fileName: 'sub', isDirectory: true, isFile: false },
            { fileName: 'link', isDirectory: true, isFile: false },
            { fileName: 'a.txt', isDirectory: false, isFile: true },
          ],
        };
      }
      if (method === 'fs/getMetadata') {
        if (params.path === 'file:///home/u/project/d/sub')
          return meta({ isDirectory: true, isFile: false, size: 4096 });
        if (params.path === 'file:///home/u/project/d/link')
          return meta({ isDirectory: true, isFile: false, isSymlink: true, size: 4096 });
        return meta();
      }
      if (method === 'fs/canonicalize') return { path: 'file:///home/u/project/d/sub' };
      throw new Error(method);
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(
      [
        '-   12 2026-01-02 03:04 a.txt',
        'l 4096 2026-01-02 03:04 link -> /home/u/project/d/sub',
        'd 4096 2026-01-02 03:04 sub',
        '',
      ].join('\n'),
    );
    expect(run.recorded.calls.filter((call) => call.method === 'fs/canonicalize')).toHaveLength(1);
  });

  it('ls -l escapes names and targets, and shows ? when metadata or the target cannot be had', async () => {
    const run = await runCli(['ls', '-l', '/d'], (method, params) => {
      if (method === 'fs/readDirectory') {
        return {
          entries: [
            { fileName: 'x\u001b[2J', isDirectory: false, isFile: true },
            { fileName: 'gone', isDirectory: false, isFile: false },
            { fileName: 'ln', isDirectory: false, isFile: true },
          ],
        };
      }
      if (method === 'fs/getMetadata' && params.path === 'file:///d/gone')
        throw new FsError('not_found', 'no');
      if (method === 'fs/getMetadata') return meta({ isSymlink: params.path === 'file:///d/ln' });
      throw new FsError('permission_denied', 'denied');
    });
    expect(run.stdout).toBe(
      [
        '?  ? ?                gone',
        'l 12 2026-01-02 03:04 ln -> ?',
        '- 12 2026-01-02 03:04 x\\x1b[2J',
        '',
      ].join('\n'),
    );
    expect(run.exitCode).toBe(0);
  });

  it('ls -l refuses a directory with more entries than it looks up one by one', async () => {
    const entries = Array.from({ length: 1001 }, (_, i) => ({
      fileName: `f${i}`,
      isDirectory: false,
      isFile: true,
    }));
    const run = await runCli(['ls', '-l', '/d'], () => ({ entries }));
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('ls -l looks up at most 1000 entries');
    expect(run.recorded.calls).toHaveLength(1);
  });

  it('stat prints kind, size, local times and symlink yes/no', async () => {
    const run = await runCli(['stat', '/d/l'], () =>
      meta({ isDirectory: true, isFile: false, isSymlink: true, createdAtMs: 0 }),
    );
    expect(run.stdout).toBe(
      [
        'path:     /d/l',
        'kind:     directory',
        'size:     12',
        'modified: 2026-01-02 03:04',
        'created:  unknown',
        'symlink:  yes',
        '',
      ].join('\n'),
    );
  });

  it('--json prints the exact wire result on every human verb', async () => {
    const wire = {
      isDirectory: false,
      isFile: true,
      isSymlink: false,
      size: 1,
      createdAtMs: 5,
      modifiedAtMs: 6,
    };
    expect(JSON.parse((await runCli(['stat', '--json', '/x'], () => wire)).stdout)).toEqual(wire);
    const listing = { entries: [{ fileName: 'a', isDirectory: false, isFile: true }] };
    expect(JSON.parse((await runCli(['ls', '-l', '--json', '/x'], () => listing)).stdout)).toEqual(listing);
    const cat = await runCli(['cat', '--json', '/x'], () => ({ dataBase64: Buffer.from('hi') }));
    expect(cat.stdout).toBe('{"dataBase64":"aGk="}\n');
    for (const argv of [
      ['rm', '--json', '/x'],
      ['cp', '--json', '/x', '/y'],
      ['write', '--json', '/x', 't'],
      ['mkdir', '--json', '/x'],
    ]) {
      const run = await runCli(argv, () => ({}));
      expect(run.stdout, argv.join(' ')).toBe('{}\n');
    }
    expect((await runCli(['rm', '/x'], () => ({}))).stdout).toBe('');
  });

  it('mkdir makes parents only with -p', async () => {
    const plain = await runCli(['mkdir', 'a/b']);
    expect(plain.recorded.calls[0]?.params).toEqual({
      path: 'file:///home/u/project/a/b',
      recursive: false,
      sandbox: null,
    });
    const parents = await runCli(['mkdir', '-p', 'a/b']);
    expect(parents.recorded.calls[0]?.params.recursive).toBe(true);
  });

  it('walk prints escaped relative paths, directories with /, and maps --max-depth to the wire', async () => {
    const result = {
      entries: [
        { path: 'file:///home/u/project/t/b', kind: 'directory' },
        { path: 'file:///home/u/project/t/z.txt', kind: 'file' },
        { path: 'file:///home/u/project/t/b/c%1B%5D0%3Bx%07', kind: 'file' },
      ],
      errors: [{ path: 'file:///home/u/project/t/locked', message: 'Permission denied' }],
      truncated: true,
    };
    const run = await runCli(['tree', '--max-depth', '2', 't'], () => result);
    expect(run.recorded.calls[0]?.params.options).toEqual({
      maxDepth: 1,
      maxDirectories: 10_000,
      maxEntries: 50_000,
      followDirectorySymlinks: false,
      pruneHiddenDirectories: false,
    });
    expect(run.stdout).toBe('b/\nb/c\\x1b]0;x\\x07\nz.txt\n');
    expect(run.stderr).toContain('fs-sandbox: walk: /home/u/project/t/locked: Permission denied\n');
    expect(run.stderr).toContain('cut short by a limit');
    expect(run.exitCode).toBe(1);
    expect((await runCli(['walk', '--max-depth', '0', 't'])).exitCode).toBe(2);
    expect(
      (await runCli(['walk', 't'], () => ({ entries: [], errors: [], truncated: false }))).recorded.calls[0]
        ?.params.options,
    ).toMatchObject({ maxDepth: 64 });
  });

  it('--version prints the package version', async () => {
    const run = await runCli(['--version']);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(run.exitCode).toBe(0);
  });
});
