import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { SandboxContextInput } from '@fs-sandbox/policy';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, ensureBuilt, REPO } from './support/build.js';
import { personPath, withHelperRuntime } from './support/cli.js';
import { codeBlocks, shellCommands } from './support/markdown.js';
import { connectMcp } from './support/mcp-client.js';
import { waitFor } from './support/processes.js';

/**
 * The docs run as written. Every command of every shell block in the README and docs/ is listed
 * in COMMANDS: either run here, in a home directory made for them (`~/repo`, the shell's cwd, and
 * `~/docs`), with this repository's `fs-sandbox` first on PATH, and its outcome
 * checked; or named with the test that runs it, or the reason nothing does. A command added to the
 * docs without an entry, or an entry whose command left the docs, fails here. The examples in
 * other languages (the README's TypeScript, the Python client, the Codex environment, the MCP
 * client configuration) are run too.
 */

interface Outcome {
  /** Exit code. */
  code: number;
  stdout?: RegExp;
  stderr?: RegExp;
  /** A path under the home directory that must (true) or must not (false) exist afterwards. */
  exists?: Record<string, boolean>;
}

type Coverage =
  | { run: Outcome; note?: string }
  | { server: 'stdio' | 'websocket'; note?: string }
  | { coveredBy: string }
  | { notRun: string };

const PERMISSION_DENIED = /\[permission_denied\]\n$/;

/** Keyed by the command as the docs write it (without its trailing comment). */
const COMMANDS: Record<string, Coverage> = {
  // README: set-up
  './scripts/demo.sh': {
    coveredBy:
      'its steps: scripts/setup.sh (run by .ci/run, through scripts/test.sh), then `fs-sandbox doctor` and `fs-sandbox demo`, run here',
  },
  './scripts/test.sh': { coveredBy: '.ci/run, which is this test run' },
  // README: the CLI
  'fs-sandbox write notes.txt "hello"': { run: { code: 0, exists: { 'repo/notes.txt': true } } },
  'fs-sandbox cat notes.txt': { run: { code: 0, stdout: /^hello$/ } },
  'fs-sandbox write ../outside.txt "x"': {
    run: {
      code: 1,
      stderr: /outside writable roots \[permission_denied\]\n$/,
      exists: { 'outside.txt': false },
    },
  },
  "fs-sandbox cat --deny '*.env' .env": { run: { code: 1, stdout: /^$/, stderr: PERMISSION_DENIED } },
  "fs-sandbox grep -i 'hello' .": { run: { code: 0, stdout: /^notes\.txt:1:hello$/m } },
  'fs-sandbox run -- ls': { run: { code: 0, stdout: /^notes\.txt$/m } },
  'fs-sandbox why .git/HEAD': { run: { code: 0, stdout: /protected/ } },
  'fs-sandbox explain': { run: { code: 0, stdout: /---- exact command/ } },
  'fs-sandbox doctor': { run: { code: 0, stdout: /sandboxed operation\s+ok/ } }, // in docs/cli.md too
  'node examples/acp-file-system.mjs /tmp/acp-workspace': {
    coveredBy: 'test/acp-backend.test.ts, with a workspace of its own',
  },
  // README: development
  'pnpm test': { coveredBy: '.ci/run (scripts/test.sh runs the same lint, type-check and suites)' },
  'pnpm exec vitest run --project unit': { coveredBy: '.ci/run (scripts/test.sh runs the unit project)' },
  'pnpm exec vitest run test/linux-escapes.test.ts': {
    coveredBy: '.ci/run (scripts/test.sh runs every e2e file)',
  },
  'pnpm bench': {
    notRun:
      'the benchmark takes minutes and loads the whole machine; its parts are checked by test/bench-*.test.ts',
  },
  'pnpm bench --peer codex': {
    notRun: 'as `pnpm bench`; the peer set-up is checked by test/bench-codex-peer.test.ts',
  },
  'pnpm bench:app-server': {
    notRun:
      'as `pnpm bench`; it drives the same servers and methods as test/app-server-reference.test.ts, which runs every method it times against both',
  },
  'pnpm format': { notRun: 'it rewrites the working tree; `pnpm run lint` (biome check) runs in .ci/run' },
  // docs/cli.md
  [`fs-sandbox call fs/readFile '{"path":"file:///work/repo/README.md","sandbox":{
  "permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
    {"path":{"type":"path","path":"file:///work/repo"},"access":"write"},
    {"path":{"type":"path","path":"file:///work/repo/.env"},"access":"deny"}]}},
  "cwd":"file:///work/repo","windowsSandboxLevel":"disabled"}}'`]: {
    run: { code: 0, stdout: /^\{"dataBase64":"IyByZXBvCg=="\}$/ },
    note: 'with ~/repo in place of /work/repo',
  },
  'fs-sandbox cat   src/main.ts': { run: { code: 0, stdout: /^let x = 1;$/m } },
  'fs-sandbox write --cwd ~/repo notes.txt "hello"': { run: { code: 0, stdout: /^$/ } },
  "echo hi | fs-sandbox write --cwd ~/repo --deny '*.env' notes.txt": { run: { code: 0 } },
  'fs-sandbox cat   --cwd ~/repo --read-root ~/docs ~/docs/spec.md': { run: { code: 0, stdout: /^# spec$/ } },
  'fs-sandbox cp  --cwd ~/repo notes.txt notes.bak': { run: { code: 0, exists: { 'repo/notes.bak': true } } },
  'fs-sandbox mv old.txt new.txt': {
    run: { code: 0, exists: { 'repo/old.txt': false, 'repo/new.txt': true } },
  },
  'fs-sandbox ls -l ~/repo': { run: { code: 0, stdout: /^-rw.* notes\.txt$/m } },
  'fs-sandbox mkdir -p ~/repo/a/b': { run: { code: 0, exists: { 'repo/a/b': true } } },
  'fs-sandbox walk --max-depth 2 ~/repo': { run: { code: 0, stdout: /^notes\.txt$/m } },
  "fs-sandbox grep -i -C 2 -g '*.ts' 'todo|fixme' src": {
    run: { code: 0, stdout: /^src\/main\.ts:3:\/\/ TODO/m },
  },
  "fs-sandbox glob '**/*.md' docs": { run: { code: 0, stdout: /^docs\/guide\.md$/m } },
  'fs-sandbox stat --json ~/repo/x': { run: { code: 0, stdout: /^\{"isDirectory":false,"isFile":true,/ } },
  'fs-sandbox read src/main.ts --line 40 --limit 20': {
    run: { code: 0, stdout: /^line 40\n(?:.*\n){18}line 59$/ },
  },
  'fs-sandbox run -- make test': { run: { code: 0, stdout: /^make test ran$/m } }, // twice in docs/cli.md
  "fs-sandbox edit src/main.ts --old 'let x' --new 'const x' --dry-run": {
    run: { code: 0, stdout: /^-let x = 1;\n\+const x = 1;$/m },
  },
  'fs-sandbox --version': { run: { code: 0, stdout: /^\d+\.\d+\.\d+$/ } },
  'fs-sandbox explain --profile workspace-write --cwd ~/repo --deny ~/repo/.env': {
    // Among the paths not accessible (the minimal set's root-only secrets are listed there too).
    run: { code: 0, stdout: /not access(?:\s+\S+)*?\s+\S*\/repo\/\.env\n/ },
  },
  'fs-sandbox explain --platform macos --profile read-only --cwd /Users/u/repo': {
    run: { code: 0, stdout: /sandbox-exec/ },
  },
  'fs-sandbox demo': { run: { code: 0, stdout: /as expected/ } },
  'fs-sandbox run --cwd ~/repo --read-root ~/.cache -- npm test': { run: { code: 0, stdout: /tests pass/ } },
  "fs-sandbox run --deny '*.env' --env CI=1 --timeout 60000 -- ./build.sh": {
    run: { code: 0, stdout: /^built, CI=1$/m },
  },
  'echo data | fs-sandbox run wc -c': { run: { code: 0, stdout: /^5$/m } },
  // docs/cli.md: policy files (the page's fs-sandbox.toml is ~/repo/fs-sandbox.toml here)
  'fs-sandbox cat --find-policy src/main.ts': { run: { code: 0, stdout: /^let x = 1;$/m } },
  'fs-sandbox cat --find-policy .env': { run: { code: 1, stdout: /^$/, stderr: PERMISSION_DENIED } },
  'fs-sandbox write --policy fs-sandbox.toml --profile review review.txt "x"': {
    run: { code: 1, stderr: PERMISSION_DENIED, exists: { 'repo/review.txt': false } },
  },
  'fs-sandbox run --find-policy --profile review -- cat ../docs/spec.md': {
    run: { code: 0, stdout: /^# spec$/ },
  },
  'fs-sandbox why --find-policy .env': {
    run: { code: 0, stdout: /written in \S*\/repo\/fs-sandbox\.toml line 7 \(profiles\.dev\.deny\[0\]\)/ },
  },
  'fs-sandbox serve --find-policy --profile review --listen stdio': { server: 'stdio' },
  // Started as written (stdin at its end, the server exits 0); test/policy-file.test.ts calls its tools.
  'fs-sandbox mcp --find-policy --profile review': {
    run: { code: 0, stderr: /^fs-sandbox mcp: profile review of \S*\/repo\/fs-sandbox\.toml$/m },
  },
  'fs-sandbox run --network -- npm install': {
    notRun: 'needs the outside network; test/network-allowlist.test.ts runs --network against local servers',
  },
  'fs-sandbox run --allow-domain registry.npmjs.org -- npm install': {
    notRun:
      'needs the outside network; test/network-allowlist.test.ts runs --allow-domain against local servers',
  },
  "fs-sandbox run --allow-domain '*.github.com:443' --allow-domain 127.0.0.1:4873 -- git fetch": {
    notRun:
      'needs the outside network; test/network-allowlist.test.ts runs git fetch through the proxy locally',
  },
  "fs-sandbox run --allow-domain '*' --deny-domain evil.example -- curl https://example.com": {
    notRun: 'needs the outside network; test/network-allowlist.test.ts tries deny entries and HTTPS locally',
  },
  'fs-sandbox run --allow-unix-socket /var/run/docker.sock -- printenv FS_SANDBOX_UNIX_SOCKETS': {
    coveredBy: 'test/unix-socket-relay.test.ts, with a socket of its own in place of docker.sock',
  },
  'fs-sandbox why --allow-domain registry.npmjs.org --host https://registry.npmjs.org/': {
    // Whether the name resolves here decides the verdict; the judgement is printed either way.
    run: { code: 0, stdout: /^registry\.npmjs\.org:443 (can|cannot) be reached by a command/ },
  },
  // docs/library.md
  'pnpm install && pnpm run build': { coveredBy: '.ci/run (scripts/setup.sh runs both)' },
  "pnpm -r --filter './packages/**' pack --pack-destination /tmp/fs-sandbox-tarballs": {
    coveredBy:
      'test/consumer-project.test.ts, which packs each package with `pnpm pack` and installs the broker',
  },
  'npm install /tmp/fs-sandbox-tarballs/fs-sandbox-{policy,helper,broker,cli,helper-linux-x64}-0.1.0.tgz': {
    notRun:
      'npm would fetch the third-party dependencies from the registry; test/packaged-install.test.ts installs the same tarballs with npm from a registry on 127.0.0.1 that serves the third-party ones too',
  },
  'pnpm add /tmp/fs-sandbox-tarballs/fs-sandbox-broker-0.1.0.tgz': {
    coveredBy:
      'test/consumer-project.test.ts (the broker tarball installed with pnpm, its siblings from theirs)',
  },
  'npm install @fs-sandbox/broker @fs-sandbox/cli': {
    coveredBy:
      'test/packaged-install.test.ts (the packed packages installed with npm from a registry on 127.0.0.1, then doctor, a sandboxed read and mcp through npx)',
  },
  'pnpm add @fs-sandbox/broker @fs-sandbox/cli': {
    coveredBy: 'test/packaged-install.test.ts (the same packages installed with pnpm 10 from that registry)',
  },
  'yarn add @fs-sandbox/broker @fs-sandbox/cli': {
    coveredBy:
      "test/packaged-install.test.ts (the same packages installed with Yarn 4 under Plug'n'Play from that registry)",
  },
  'npx @fs-sandbox/cli mcp DIR': {
    coveredBy:
      'test/packaged-install.test.ts, which runs `mcp DIR` through npx in the installed project (the package is not published: nothing here fetches it by name)',
  },
  'yarn add @fs-sandbox/broker@file:/tmp/fs-sandbox-tarballs/fs-sandbox-broker-0.1.0.tgz': {
    notRun:
      'Yarn would fetch the third-party dependencies from the registry; test/packaged-install.test.ts installs the same tarballs with Yarn 4 from a registry on 127.0.0.1 that serves the third-party ones too',
  },
  'pnpm add /path/to/fs-sandbox/packages/broker': {
    notRun:
      'a link to a checkout; the same package is what test/consumer-project.test.ts installs from its tarball',
  },
  // docs/protocols/exec-server.md
  'fs-sandbox serve --listen stdio': { server: 'stdio' },
  'fs-sandbox serve --listen ws://127.0.0.1:8765 --token-file ./token': {
    server: 'websocket',
    note: 'on a free port in place of 8765 (another run on this machine may hold that one)',
  },
};

const shellBlocks = codeBlocks().filter((block) => ['sh', 'bash', 'shell'].includes(block.lang));
const documented = shellBlocks.flatMap((block) =>
  shellCommands(block.text).map((command) => ({ ...block, command })),
);

let base: string;
let home: string;
let project: string;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-docs-');
  home = join(base, 'home');
  project = join(home, 'repo'); // the shell's cwd: the docs' examples run in ~/repo
  await mkdir(join(project, 'src'), { recursive: true });
  await mkdir(join(project, 'docs'));
  await mkdir(join(project, '.git'));
  await mkdir(join(home, 'docs'));
  await mkdir(join(home, '.cache'));
  const lines = Array.from({ length: 70 }, (_, i) => `line ${i + 1}`);
  lines.splice(0, 3, 'let x = 1;', 'export { x };', '// TODO: more');
  await writeFile(join(project, 'src/main.ts'), `${lines.join('\n')}\n`);
  await writeFile(join(project, 'docs/guide.md'), '# guide\n');
  await writeFile(join(project, '.git/HEAD'), 'ref: refs/heads/main\n');
  await writeFile(join(project, '.env'), 'API_KEY=secret\n');
  await writeFile(join(project, 'old.txt'), 'old\n');
  await writeFile(join(project, 'token'), 'a-token-of-the-docs-test\n');
  await writeFile(join(project, 'Makefile'), 'test:\n\t@echo make test ran\n');
  await writeFile(join(project, 'build.sh'), '#!/bin/sh\necho "built, CI=$CI"\n');
  await chmod(join(project, 'build.sh'), 0o755);
  await writeFile(join(project, 'README.md'), '# repo\n');
  await writeFile(join(project, 'x'), 'x\n');
  await writeFile(join(project, 'package.json'), '{"name":"repo","scripts":{"test":"echo tests pass"}}\n');
  await writeFile(join(home, 'docs/spec.md'), '# spec\n');
  // The policy file of docs/cli.md, where its commands find it.
  const [policy] = codeBlocks().filter(
    (block) => block.lang === 'toml' && block.text.startsWith('# fs-sandbox.toml'),
  );
  expect(policy?.page).toBe('docs/cli.md');
  await writeFile(join(project, 'fs-sandbox.toml'), policy?.text ?? '');
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** A person's shell in ~/repo, with HOME at the made home and this repository's CLI on PATH. */
function shellEnv(): Record<string, string> {
  return withHelperRuntime({ HOME: home, PATH: personPath() });
}

/** The command as it runs here: the docs' machine paths and port replaced by the test's. */
function asRun(command: string, port: number): string {
  return command.replaceAll('/work/repo', join(home, 'repo')).replaceAll('8765', String(port));
}

function shell(command: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--norc', '-c', command], {
      cwd: project,
      env: shellEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

describe('every command in the docs', () => {
  it('has an entry here, and every entry is still in the docs', () => {
    expect(documented.length).toBeGreaterThan(30);
    const missing = documented.filter(({ command }) => !(command in COMMANDS));
    expect(missing.map(({ page, command }) => `${page}: ${command}`)).toEqual([]);
    const shown = new Set(documented.map(({ command }) => command));
    expect(Object.keys(COMMANDS).filter((command) => !shown.has(command))).toEqual([]);
  });

  const hasMake = spawnSync('make', ['--version']).status === 0;

  it.each(
    documented.map(
      ({ page, command }, i) => [`${page} #${i + 1}: ${command.split('\n')[0]}`, command] as const,
    ),
  )('%s', async (_, command) => {
    const coverage = COMMANDS[command];
    if (coverage === undefined || !('run' in coverage || 'server' in coverage)) return;
    if (command.includes('make test') && !hasMake) {
      // No make on this machine: nothing to run the Makefile (the command is the docs' own example).
      expect(hasMake).toBe(false);
      return;
    }
    const port = await freePort();
    if ('server' in coverage) {
      const child = spawn('bash', ['--norc', '-c', `exec ${asRun(command, port)}`], {
        cwd: project,
        env: shellEnv(),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      if (coverage.server === 'stdio') {
        child.stdin?.end(
          `${JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'docs' } })}\n`,
        );
        let stdout = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          stdout += chunk.toString('utf8');
        });
        expect(await exited(child)).toBe(0);
        expect(JSON.parse(stdout.split('\n')[0] ?? '')).toMatchObject({
          id: 1,
          result: { sessionId: expect.any(String) },
        });
        return;
      }
      const { connectBroker } = await import('@fs-sandbox/broker/remote');
      const token = readFileSync(join(project, 'token'), 'utf8').trim();
      const broker = await waitFor(
        async () => connectBroker({ url: `ws://127.0.0.1:${port}`, token }).catch(() => undefined),
        20_000,
        'the WebSocket server to listen',
      );
      const sandbox: SandboxContextInput = {
        permissions: {
          type: 'managed',
          file_system: {
            type: 'restricted',
            entries: [{ path: { type: 'path', path: `file://${project}` }, access: 'read' }],
          },
          network: 'restricted',
        },
      };
      const read = await broker.call('fs/readFile', {
        path: `file://${join(project, 'README.md')}`,
        sandbox,
      });
      expect(read.dataBase64.toString('utf8')).toBe('# repo\n');
      await broker.close();
      child.kill('SIGTERM');
      expect(await exited(child)).toBe(0);
      return;
    }
    const run = await shell(asRun(command, port));
    const outcome = coverage.run;
    expect(run.code, run.stderr).toBe(outcome.code);
    if (outcome.stdout) expect(run.stdout.trimEnd()).toMatch(outcome.stdout);
    if (outcome.stderr) expect(run.stderr).toMatch(outcome.stderr);
    for (const [path, present] of Object.entries(outcome.exists ?? {})) {
      expect(existsSync(join(home, path)), path).toBe(present);
    }
  });
});

describe('the examples in other languages', () => {
  it("the README's TypeScript library example writes, reads and is refused outside, as its comments say", async () => {
    const [example] = codeBlocks().filter((block) => block.page === 'README.md' && block.lang === 'ts');
    expect(example).toBeDefined();
    const workspace = join(base, 'library');
    await mkdir(workspace);
    // Run as the README says a project runs it: compiled to JavaScript, where the package resolves.
    const js = ts.transpileModule(example?.text ?? '', {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    await writeFile(join(workspace, 'main.mjs'), js);
    await symlink(join(REPO, 'test/node_modules'), join(workspace, 'node_modules')); // where this package's dependencies are
    const run = spawnSync(process.execPath, ['main.mjs'], {
      cwd: workspace,
      env: withHelperRuntime({ PATH: '/usr/bin:/bin' }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe('hello\nrefused: permission_denied\n');
    expect(readFileSync(join(workspace, 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(existsSync(join(base, 'outside.txt'))).toBe(false);
  });

  const python = spawnSync('python3', ['--version']);
  it.skipIf(python.status !== 0)(
    'the Python client runs against serve --listen stdio (needs python3)',
    () => {
      const [example] = codeBlocks().filter((block) => block.lang === 'python');
      expect(example?.page).toBe('docs/protocols/exec-server.md');
      const script = (example?.text ?? '').replace(
        '["fs-sandbox", ',
        `["node", ${JSON.stringify(CLI_BIN)}, `,
      );
      expect(script).not.toBe(example?.text);
      const run = spawnSync('python3', ['-c', script], {
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env },
      });
      expect(run.status, run.stderr).toBe(0);
      const [initialize, , metadata] = run.stdout.split('\n');
      const reply = JSON.parse(initialize ?? '');
      // As the page says: no "jsonrpc" in replies, capabilities inside environmentInfo.
      expect(reply).not.toHaveProperty('jsonrpc');
      expect(reply.result).not.toHaveProperty('capabilities');
      expect(reply.result.environmentInfo.capabilities).toMatchObject({ sandboxedFileStreaming: true });
      expect(metadata).toMatch(/^\{'id': 2, 'result': \{'isDirectory': False, 'isFile': True/);
    },
  );

  it('the exec-server page states the framing, where capabilities sit and that replies omit jsonrpc', () => {
    const page = readFileSync(join(REPO, 'docs/protocols/exec-server.md'), 'utf8');
    expect(page).toContain('no\n`Content-Length` headers');
    expect(page).toContain('sit inside `environmentInfo`');
    expect(page).toContain('Replies omit `"jsonrpc": "2.0"`');
  });

  it("the Codex environments' stdio entries start a server that answers initialize", async () => {
    const environments = codeBlocks()
      .filter((block) => block.lang === 'toml')
      .flatMap((block) => [...block.text.matchAll(/^program = "([^"]+)"\nargs = (\[.*\])$/gm)]);
    expect(environments.length).toBeGreaterThanOrEqual(2); // the README's and the exec-server page's
    for (const [, program, args] of environments) {
      expect(program).toBe('fs-sandbox');
      const child = spawn('fs-sandbox', JSON.parse(args as string), {
        cwd: project,
        env: shellEnv(),
        stdio: ['pipe', 'pipe', 'ignore'],
      });
      let stdout = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
      });
      child.stdin?.end(
        `${JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'codex-environment' } })}\n`,
      );
      expect(await exited(child)).toBe(0);
      expect(JSON.parse(stdout.split('\n')[0] ?? '')).toMatchObject({
        id: 1,
        result: { environmentInfo: { capabilities: expect.any(Object) } },
      });
    }
  });

  it("the MCP client configuration's server lists the tools and reads inside its directories only", async () => {
    const configs = codeBlocks().filter(
      (block) => block.lang === 'json' && block.text.includes('"mcpServers"'),
    );
    expect(configs.map((block) => block.page)).toEqual(['README.md', 'docs/protocols/mcp.md']);
    for (const block of configs) {
      const { command, args } = JSON.parse(block.text).mcpServers.filesystem as {
        command: string;
        args: string[];
      };
      expect(command).toBe('fs-sandbox');
      // The docs' directories are a person's; here, the made home's project and repo.
      const dirs = args.filter((arg) => arg.startsWith('/Users/'));
      expect(dirs).toHaveLength(2);
      const mine = args.map((arg) =>
        arg === dirs[0] ? project : arg === dirs[1] ? join(home, '.cache') : arg,
      );
      const mcp = await connectMcp([CLI_BIN, ...mine]);
      try {
        const { tools } = await mcp.client.listTools();
        expect(tools.map((tool) => tool.name)).toContain('read_text_file');
        expect((await mcp.call('read_text_file', { path: join(home, 'docs/spec.md') })).text).toMatch(
          /^permission_denied/,
        );
        expect((await mcp.call('read_text_file', { path: join(project, '.env') })).text).toMatch(
          /^permission_denied/,
        );
        expect((await mcp.call('read_text_file', { path: join(project, 'docs/guide.md') })).text).toBe(
          '# guide\n',
        );
      } finally {
        await mcp.close();
      }
    }
  });
});
