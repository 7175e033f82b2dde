import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { type BrokerOptions, FS_METHODS, type FsBroker } from '@fs-sandbox/broker/internal';
import { EXECUTABLE_SURFACE, FsError, type SandboxPlan } from '@fs-sandbox/policy';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliDeps } from '../src/cli/cli-io.js';
import { EXPLAIN_SEPARATOR, summarizeSandbox } from '../src/cli/explain-command.js';
import { cliWording, writeResultJson } from '../src/cli/json-output.js';
import { buildProgram } from '../src/cli/main.js';
import { formatCommand, shellQuote } from '../src/cli/shell-quote.js';

/** Real directories: the shortcuts check that --cwd, --writable-root and --read-root exist. */
const SCRATCH = mkdtempSync(join(tmpdir(), 'fs-sandbox-cli-args-'));
const PROJECT = join(SCRATCH, 'project');
const W = join(SCRATCH, 'w');
const OUT = join(SCRATCH, 'out');
for (const dir of [PROJECT, W, OUT]) mkdirSync(dir);
writeFileSync(join(PROJECT, 'file.txt'), '');
const u = (path: string) => `file://${path}`;
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

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
    async prepareCommand() {
      throw new Error('not used by these cases');
    },
    async run() {
      throw new Error('not used by these cases');
    },
    async spawn() {
      throw new Error('not used by these cases');
    },
    async explainAccess(params) {
      recorded.calls.push({
        method: 'fs/explainAccess',
        params: params as Record<string, unknown>,
        timeoutMs: undefined,
      });
      return { access: 'read', reason: 'outside writable roots' };
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
          runtimeKind: 'node',
          runtimeArgs: [],
          helper: 'h.cjs',
          helperArgs: [],
          mountPoints: [],
          boundRoots: [],
          env: {},
        },
        guard: {
          entries: [],
          denyGlobs: [],
          deniedIdentities: [],
          surface: { entries: [...EXECUTABLE_SURFACE], home: null },
        },
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
      cwd: PROJECT,
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
    await (await buildProgram(deps, argv)).parseAsync(argv, { from: 'user' });
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
    // The code `serve` answers for an unknown method (-32601), not -32600; the kind stays.
    expect(JSON.parse(unknown.stdout)).toEqual({
      error: {
        code: -32601,
        message: `unknown method \`fs/frobnicate\`; one of ${[...FS_METHODS, 'fs/explainAccess'].join(', ')}`,
        data: { errorKind: 'invalid_request' },
      },
    });
    expect(JSON.parse(bad.stdout).error.code).toBe(-32600);
    expect(unknown.exitCode).toBe(1);
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
  const MINIMAL_READ = { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' };
  type Sent = { permissions: { file_system: { entries: unknown[] } }; cwd: string };
  const sentSandbox = (run: Awaited<ReturnType<typeof runCli>>) =>
    run.recorded.calls[0]?.params.sandbox as Sent;

  it('is sandboxed by default: workspace-write on the cwd with the minimal reads, not the whole disk', async () => {
    const run = await runCli(['rm', '-r', 'build']);
    expect(run.recorded.calls[0]?.params).toEqual({
      path: u(`${PROJECT}/build`),
      recursive: true,
      force: false,
      sandbox: {
        permissions: {
          type: 'managed',
          file_system: {
            type: 'restricted',
            entries: [MINIMAL_READ, { path: { type: 'path', path: u(PROJECT) }, access: 'write' }],
          },
          network: 'restricted',
        },
        cwd: u(PROJECT),
        workspaceRoots: [u(PROJECT)],
        windowsSandboxLevel: 'disabled',
      },
    });
  });

  it('builds a workspace-write context from the flags; operands and flag paths resolve against --cwd', async () => {
    const run = await runCli(
      [
        'cat',
        '--profile',
        'workspace-write',
        '--cwd',
        W,
        '--deny',
        'secret',
        '--read-root',
        OUT,
        'notes.txt',
      ],
      () => ({ dataBase64: Buffer.from('text') }),
    );
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('text');
    expect(run.recorded.calls[0]).toEqual({
      method: 'fs/readFile',
      timeoutMs: undefined,
      params: {
        path: u(`${W}/notes.txt`),
        sandbox: {
          permissions: {
            type: 'managed',
            file_system: {
              type: 'restricted',
              entries: [
                MINIMAL_READ,
                { path: { type: 'path', path: u(W) }, access: 'write' },
                { path: { type: 'path', path: u(`${W}/secret`) }, access: 'deny' },
                { path: { type: 'path', path: u(OUT) }, access: 'read' },
              ],
            },
            network: 'restricted',
          },
          cwd: u(W),
          workspaceRoots: [u(W)],
          windowsSandboxLevel: 'disabled',
        },
      },
    });
  });

  it('a relative --cwd resolves against the current directory', async () => {
    const run = await runCli(['stat', '--cwd', '../w', 'a']);
    expect(run.recorded.calls[0]?.params.path).toBe(u(`${W}/a`));
    expect(sentSandbox(run).cwd).toBe(u(W));
  });

  it('turns a --deny value with * ? [ { into a glob entry, left relative for the policy to join to the cwd', async () => {
    const run = await runCli(['ls', '--deny', '*.env', '--deny', '/abs/**/id_*', '--deny', 'plain']);
    expect(sentSandbox(run).permissions.file_system.entries).toEqual([
      MINIMAL_READ,
      { path: { type: 'path', path: u(PROJECT) }, access: 'write' },
      { path: { type: 'path', path: u(`${PROJECT}/plain`) }, access: 'deny' },
      { path: { type: 'glob_pattern', pattern: '*.env' }, access: 'deny' },
      { path: { type: 'glob_pattern', pattern: '/abs/**/id_*' }, access: 'deny' },
    ]);
  });

  it('read-only reads the whole disk and writes nothing; --writable-root implies workspace-write', async () => {
    const readOnly = await runCli(['stat', '--profile', 'read-only', '/etc'], () => ({}));
    expect(sentSandbox(readOnly).permissions.file_system.entries).toEqual([ROOT_READ]);
    // Naming a read root means only these: the minimal roots, the cwd and the read roots.
    const confined = await runCli(['stat', '--profile', 'read-only', '--read-root', OUT, '/etc'], () => ({}));
    expect(sentSandbox(confined).permissions.file_system.entries).toEqual([
      MINIMAL_READ,
      { path: { type: 'path', path: u(PROJECT) }, access: 'read' },
      { path: { type: 'path', path: u(OUT) }, access: 'read' },
    ]);

    const implied = await runCli(['write', '--writable-root', OUT, `${OUT}/a`, 'hi']);
    const params = implied.recorded.calls[0]?.params as {
      dataBase64: string;
      mode: string;
      sandbox: Sent;
    };
    expect(params.dataBase64).toBe(Buffer.from('hi').toString('base64'));
    expect(params.mode).toBe('overwrite');
    // The cwd stays readable next to another writable root.
    expect(params.sandbox.permissions.file_system.entries).toEqual([
      MINIMAL_READ,
      { path: { type: 'path', path: u(PROJECT) }, access: 'read' },
      { path: { type: 'path', path: u(OUT) }, access: 'write' },
    ]);
  });

  it('runs without a sandbox with --no-sandbox, operands still under --cwd', async () => {
    const run = await runCli(['rm', '--no-sandbox', '--cwd', W, '-r', 'build']);
    expect(run.stderr).toBe('');
    expect(run.recorded.calls[0]?.params).toEqual({
      path: u(`${W}/build`),
      recursive: true,
      force: false,
      sandbox: null,
    });
    const both = await runCli(['rm', '--no-sandbox', '--deny', 'x', 'build']);
    expect(both.stderr).toBe(
      'fs-sandbox: --no-sandbox cannot be combined with the profile flags [invalid_params]\n',
    );
  });

  it('accepts a full --sandbox JSON context', async () => {
    const context = { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' };
    const run = await runCli(['cp', '-r', '--sandbox', JSON.stringify(context), 'a', 'b']);
    expect(run.recorded.calls[0]?.params).toEqual({
      sourcePath: u(`${PROJECT}/a`),
      destinationPath: u(`${PROJECT}/b`),
      recursive: true,
      sandbox: context,
    });
  });

  it('refuses a missing or non-directory --cwd, --writable-root and --read-root, naming the flag', async () => {
    const cases = [
      [['--cwd', '/nonexistent'], 'fs-sandbox: --cwd /nonexistent does not exist [invalid_params]\n'],
      [
        ['--writable-root', 'nope'],
        `fs-sandbox: --writable-root ${PROJECT}/nope does not exist [invalid_params]\n`,
      ],
      [
        ['--read-root', 'file.txt'],
        `fs-sandbox: --read-root ${PROJECT}/file.txt is not a directory [invalid_params]\n`,
      ],
      [
        ['--no-sandbox', '--cwd', '/nonexistent'],
        'fs-sandbox: --cwd /nonexistent does not exist [invalid_params]\n',
      ],
    ] as const;
    for (const [flags, message] of cases) {
      const run = await runCli(['cat', ...flags, 'a']);
      expect(run.stderr).toBe(message);
      expect(run.exitCode).toBe(1);
      expect(run.recorded.calls).toHaveLength(0);
    }
  });

  it('reports bad flag combinations as one line on stderr with exit 1', async () => {
    const run = await runCli(['cat', '--profile', 'read-only', '--writable-root', OUT, 'a']);
    expect(run.stderr).toBe('fs-sandbox: --writable-root needs --profile workspace-write [invalid_params]\n');
    expect(run.exitCode).toBe(1);
    expect(run.recorded.calls).toHaveLength(0);
    const both = await runCli(['cat', '--profile', 'read-only', '--sandbox', '{}', 'a']);
    expect(both.stderr).toBe(
      'fs-sandbox: --sandbox cannot be combined with the profile flags (but --read-root, which adds reads to it) [invalid_params]\n',
    );
  });

  it('write refuses an empty stdin unless --allow-empty, and passes --create and --expect-sha256', async () => {
    const empty = await runCli(['write', 'a.txt']);
    expect(empty.stderr).toBe(
      'fs-sandbox: stdin is empty; pass --allow-empty to write an empty file, or give TEXT [invalid_params]\n',
    );
    expect(empty.exitCode).toBe(1);
    expect(empty.recorded.calls).toHaveLength(0);
    const allowed = await runCli(['write', '--allow-empty', 'a.txt']);
    expect(allowed.recorded.calls[0]?.params.dataBase64).toBe('');
    // An explicit empty TEXT is what was asked for.
    expect((await runCli(['write', 'a.txt', ''])).recorded.calls).toHaveLength(1);
    const hex = 'ab'.repeat(32);
    const guarded = await runCli(['write', '--create', '--expect-sha256', hex, 'a.txt'], () => ({}), 'x');
    expect(guarded.recorded.calls[0]?.params).toMatchObject({
      dataBase64: Buffer.from('x').toString('base64'),
      mode: 'create',
      expectedSha256: hex,
    });
    expect((await runCli(['write', 'a.txt', 'x'])).recorded.calls[0]?.params).not.toHaveProperty(
      'expectedSha256',
    );
  });

  it('says in --help what each profile reads', async () => {
    const run = await runCli(['cat', '--help']);
    const help = run.stdout.replace(/\s+/g, ' ');
    expect(help).toContain(
      "workspace-write: writes the writable roots (default: the cwd), reads only the platform's minimal roots",
    );
    expect(help).toContain(
      'read-only: writes nothing and reads the WHOLE disk (but the root-only secrets such as /etc/shadow and host keys), or with --read-root only the minimal roots, the cwd and the read roots',
    );
    expect(run.stdout).toContain('--no-sandbox');
    expect(run.stdout).toContain('--read-root');
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
    const run = await runCli(['explain', '--raw', '--profile', 'read-only']);
    expect(run.stdout).toBe(
      '# backend: bwrap (linux)\n/usr/bin/bwrap \\\n  --tmpfs / \\\n  -- /usr/bin/node h.cjs\n',
    );
  });

  it('says what the context allows in words before the exact command', async () => {
    const run = await runCli(['explain', '--profile', 'read-only']);
    expect(run.stdout).toBe(
      [
        'The helper runs under bwrap (linux) and may:',
        '  read         the whole disk (read-only), except what is denied below',
        '  write        nothing',
        '  not access   no denied paths',
        '  network      none (the helper runs in its own empty network namespace)',
        '  environment  none',
        '  runtime      node /usr/bin/node',
        '  commands     network: none (an empty network namespace of their own)',
        '               unix sockets: none (no AF_UNIX socket of their own; socketpair works)',
        '',
        EXPLAIN_SEPARATOR,
        '# backend: bwrap (linux)',
        '/usr/bin/bwrap \\',
        '  --tmpfs / \\',
        '  -- /usr/bin/node h.cjs',
        '',
      ].join('\n'),
    );
  });

  it('names writable roots, protected names, denied paths and globs, and the environment', () => {
    const plan: SandboxPlan = {
      os: 'linux',
      fullDiskRead: false,
      readableRoots: ['/usr', '/w'],
      writableRoots: [
        { root: '/w', readOnlySubpaths: ['/w/docs'], protectedNames: ['.git', '.agents', '.codex'] },
      ],
      deniedPaths: ['/w/secret'],
      unshownDeniedPaths: ['/elsewhere'],
      denyGlobs: ['/w/**/*.pem'],
      cwd: '/w',
    };
    const lines = summarizeSandbox(plan, {
      backend: 'bwrap',
      sandboxProgram: 'bwrap',
      sandboxArgs: [],
      runtime: 'node',
      runtimeKind: 'node',
      runtimeArgs: [],
      helper: 'h.cjs',
      helperArgs: [],
      mountPoints: [],
      boundRoots: [],
      env: { PATH: '/bin', LANG: 'C' },
    });
    expect(lines).toEqual([
      'The helper runs under bwrap (linux) and may:',
      '  read         /usr',
      '               /w',
      '  write        /w',
      '                 read-only inside: /w/docs',
      '                 protected (never written directly under it): .git, .agents, .codex',
      '  not access   /w/secret',
      '               /elsewhere (granted by no name; masked where a link shows it)',
      '  nor match    /w/**/*.pem',
      '  network      none (the helper runs in its own empty network namespace)',
      '  environment  LANG, PATH',
      '  cwd          /w',
      '  runtime      node node',
    ]);
  });

  it('names the system call filter and the kernel paths the launch covers (only those its argv mounts)', () => {
    const plan: SandboxPlan = {
      os: 'linux',
      fullDiskRead: true,
      readableRoots: [],
      writableRoots: [],
      deniedPaths: [],
      denyGlobs: [],
      cwd: null,
    };
    const lines = summarizeSandbox(plan, {
      backend: 'bwrap',
      sandboxProgram: 'bwrap',
      sandboxArgs: [
        '--ro-bind',
        '/proc/sys',
        '/proc/sys',
        '--perms',
        '0000',
        '--ro-bind-data',
        '4',
        '/proc/keys',
      ],
      runtime: 'node',
      runtimeKind: 'node',
      runtimeArgs: [],
      helper: 'h.cjs',
      helperArgs: [],
      mountPoints: [],
      boundRoots: [],
      env: {},
      inputs: { firstFd: 3, seccomp: 'AA==', emptyInputs: 1 },
    });
    expect(lines.slice(-4)).toEqual([
      '  system calls no unix sockets (socketpair works), no io_uring, keyrings, bpf, perf events or userfaultfd (seccomp)',
      '  kernel       read-only: /proc/sys',
      '               masked: /proc/keys',
      '  runtime      node node',
    ]);
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
    const run = await runCli(['explain', '--raw', '--platform', 'macos', JSON.stringify(context)]);
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
      '--raw',
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
    permissions: '0644',
    accessedAtMs: at,
    hardLinks: 1,
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
        if (params.path === `${u(PROJECT)}/d/sub`)
          return meta({ isDirectory: true, isFile: false, size: 4096, permissions: '0755' });
        if (params.path === `${u(PROJECT)}/d/link`)
          return meta({ isDirectory: true, isFile: false, isSymlink: true, size: 4096 });
        return meta();
      }
      if (method === 'fs/canonicalize') return { path: `${u(PROJECT)}/d/sub` };
      throw new Error(method);
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(
      [
        '-rw-r--r--   12 2026-01-02 03:04 a.txt',
        `lrwxrwxrwx 4096 2026-01-02 03:04 link -> ${PROJECT}/d/sub`,
        'drwxr-xr-x 4096 2026-01-02 03:04 sub',
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
        '??????????  ? ?                gone',
        'lrwxrwxrwx 12 2026-01-02 03:04 ln -> ?',
        '-rw-r--r-- 12 2026-01-02 03:04 x\\x1b[2J',
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
    expect(plain.recorded.calls[0]?.params).toMatchObject({ path: `${u(PROJECT)}/a/b`, recursive: false });
    const parents = await runCli(['mkdir', '-p', 'a/b']);
    expect(parents.recorded.calls[0]?.params.recursive).toBe(true);
  });

  it('walk prints escaped relative paths, directories with /, and maps --max-depth to the wire', async () => {
    const result = {
      entries: [
        { path: `${u(PROJECT)}/t/b`, kind: 'directory' },
        { path: `${u(PROJECT)}/t/z.txt`, kind: 'file' },
        { path: `${u(PROJECT)}/t/b/c%1B%5D0%3Bx%07`, kind: 'file' },
      ],
      errors: [{ path: `${u(PROJECT)}/t/locked`, message: 'Permission denied' }],
      truncated: true,
    };
    const run = await runCli(['tree', '--max-depth', '2', 't'], () => result);
    expect(run.recorded.calls[0]?.params.options).toEqual({
      maxDepth: 1,
      maxDirectories: 10_000,
      maxEntries: 50_000,
      followDirectorySymlinks: false,
      pruneHiddenDirectories: false,
      includeSymlinks: true,
    });
    expect(run.stdout).toBe('b/\nb/c\\x1b]0;x\\x07\nz.txt\n');
    expect(run.stderr).toContain(`fs-sandbox: walk: ${PROJECT}/t/locked: Permission denied\n`);
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

describe('errors in the CLI words', () => {
  it('turns the helper advice `pass recursive: true` into -r for rm and cp, keeping the kind', async () => {
    const rm = await runCli(['rm', 'build'], () => {
      throw new FsError(
        'is_directory',
        'Directory not empty: /w/build (pass recursive: true to remove it with its contents)',
      );
    });
    expect(rm.exitCode).toBe(1);
    expect(rm.stderr).toBe(
      'fs-sandbox: Directory not empty: /w/build (use rm -r to remove it with its contents) [is_directory]\n',
    );
    const cp = await runCli(['cp', 'a', 'b'], () => {
      throw new FsError('invalid_request', 'fs/copy requires recursive: true when sourcePath is a directory');
    });
    expect(cp.stderr).toBe('fs-sandbox: the source is a directory; use cp -r to copy it [invalid_request]\n');
  });

  it('call keeps the wire error exact on stdout and says on stderr to write a file: URI', async () => {
    const run = await runCli(['call', 'fs/getMetadata', '{"path":"notes.txt","sandbox":null}'], () => {
      throw new FsError('invalid_params', 'invalid URI: relative URL without a base', { field: 'path' });
    });
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({
      error: {
        code: -32602,
        message: 'invalid URI: relative URL without a base',
        data: { field: 'path', errorKind: 'invalid_params' },
      },
    });
    expect(run.stderr).toBe(
      'fs-sandbox: `path`: invalid URI: relative URL without a base; write it as a file: URI, e.g. file:///abs/path [invalid_params]\n',
    );
  });

  it('leaves every other message as the wire wrote it, and call silent on stderr', async () => {
    expect(cliWording('No such file or directory: /w/x')).toBe('No such file or directory: /w/x');
    const run = await runCli(['call', 'fs/getMetadata', '{"path":"file:///x","sandbox":null}'], () => {
      throw new FsError('not_found', 'No such file or directory: /x');
    });
    expect(run.stderr).toBe('');
  });
});
