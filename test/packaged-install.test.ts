import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensurePackagesBuilt,
  HANG_MS,
  output,
  type Packed,
  packAll,
  packageManagerEnv,
  type Registry,
  run,
  startRegistry,
} from './support/packed-packages.js';

/**
 * Installed as a new user installs it: every package packed with `pnpm pack`, served by a registry
 * on 127.0.0.1 (the third-party packages as the workspace installed them, nothing from the network),
 * installed into a fresh project with `npm install @fs-sandbox/cli @fs-sandbox/broker`, then run
 * through npx: `doctor`, a sandboxed read, and `mcp DIR` answering tools/list. The Bun helper comes
 * as this platform's package (`@fs-sandbox/helper-linux-x64`), an optional dependency of
 * `@fs-sandbox/helper`, which itself carries no binary.
 */

/** The Bun helper runs only on Linux x64/arm64, where its package is built (packages/helper-linux-*). */
const BUN_PLATFORM = process.platform === 'linux' && ['x64', 'arm64'].includes(process.arch);
const BUN_PACKAGE = `@fs-sandbox/helper-${process.platform}-${process.arch}`;
/** Everything @fs-sandbox/helper ships is JavaScript and declarations, a few hundred KB packed. */
const HELPER_PACKED_MAX_BYTES = 1024 * 1024;

describe.runIf(BUN_PLATFORM)('a fresh project that installs the packed packages with npm', () => {
  let base: string;
  let project: string;
  let env: NodeJS.ProcessEnv;
  let packed: Packed[];
  let registry: Registry | undefined;
  let install: { code: number; stdout: string; stderr: string; ms: number };

  const npx = (args: string[]) => run('npx', ['--no', 'fs-sandbox', ...args], { cwd: project, env });

  beforeAll(async () => {
    await ensurePackagesBuilt();
    base = mkdtempSync(join(tmpdir(), 'fs-sandbox-npm-consumer-'));
    project = join(base, 'project');
    mkdirSync(join(base, 'tarballs'));
    mkdirSync(project);
    packed = await packAll(join(base, 'tarballs'));
    registry = await startRegistry(packed, 'installed');
    // A cache of its own: nothing installed from an earlier run or from the network.
    env = {
      ...packageManagerEnv(),
      npm_config_registry: `${registry.url}/`,
      npm_config_cache: join(base, 'npm-cache'),
      npm_config_audit: 'false',
      npm_config_fund: 'false',
    };
    const versionOf = (name: string) => packed.find((pkg) => pkg.name === name)?.version;
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'fs-sandbox-npm-consumer', private: true, type: 'module' }),
    );
    const start = Date.now();
    const result = await run(
      'npm',
      [
        'install',
        `@fs-sandbox/cli@${versionOf('@fs-sandbox/cli')}`,
        `@fs-sandbox/broker@${versionOf('@fs-sandbox/broker')}`,
      ],
      { cwd: project, env },
    );
    install = { ...result, ms: Date.now() - start };
    if (install.code !== 0) {
      throw new Error(`${output('npm install', install)}\nregistry 404s: ${registry.misses.join(', ')}`);
    }
    // A build, a pack of the 110 MB binary and an install, each bounded by HANG_MS.
  }, 3 * HANG_MS);

  afterAll(async () => {
    await registry?.close();
    if (base !== undefined) rmSync(base, { recursive: true, force: true });
    const sizes = packed?.map((pkg) => `${pkg.name} ${pkg.tarball.length} B`).join(', ');
    process.stdout.write(`npm consumer: install ${install?.ms} ms; packed ${sizes}\n`);
  });

  it('packs the helper without any platform binary, and the Bun helper executable in its own package', () => {
    const helper = packed.find((pkg) => pkg.name === '@fs-sandbox/helper');
    expect(helper?.tarball.length).toBeLessThan(HELPER_PACKED_MAX_BYTES);
    expect([...(helper?.files.keys() ?? [])].filter((name) => /helper-bun/.test(name))).toEqual([]);
    expect(helper?.manifest.optionalDependencies).toEqual({
      '@fs-sandbox/helper-linux-arm64': helper?.version,
      '@fs-sandbox/helper-linux-x64': helper?.version,
    });
    const bun = packed.find((pkg) => pkg.name === BUN_PACKAGE);
    expect(bun?.manifest).toMatchObject({ os: ['linux'], cpu: [process.arch], libc: ['glibc'] });
    expect(bun?.files.get('bin/helper-bun')).toBeGreaterThan(1024 * 1024);
    // 0755: pnpm pack keeps the execute bit of bin targets only (the package names it in bin).
    expect(bun?.modes.get('bin/helper-bun')).toBe(0o755);
  });

  it('installs only this platform’s Bun helper package, executable', () => {
    const installed = join(project, 'node_modules', BUN_PACKAGE, 'bin', 'helper-bun');
    expect(() => accessSync(installed, constants.X_OK)).not.toThrow();
    const other = process.arch === 'x64' ? 'arm64' : 'x64';
    expect(() => accessSync(join(project, 'node_modules', `@fs-sandbox/helper-linux-${other}`))).toThrow();
    expect(() => accessSync(join(project, 'node_modules', '@oven'))).toThrow();
  });

  it(
    'doctor: the Bun helper passes its self-check, and sandboxed operations work',
    async () => {
      const doctor = await npx(['doctor']);
      expect(doctor.code, output('npx fs-sandbox doctor', doctor)).toBe(0);
      const bunHelper = realpathSync(join(project, 'node_modules', BUN_PACKAGE, 'bin', 'helper-bun'));
      expect(doctor.stdout).toMatch(/^helper runtime +ok +bun\s/m);
      expect(doctor.stdout).toMatch(/^sandboxed operation +ok /m);
      // The table wraps long details, within words too: compare without any white space.
      expect(doctor.stdout.replace(/\s+/g, '')).toContain(
        `bun${bunHelper}(theBunhelperisinstalled;itpassedtheself-check)`,
      );
      expect(doctor.stdout).not.toMatch(/WARN|FAIL/);
      process.stdout.write(`npx fs-sandbox doctor:\n${doctor.stdout}\n`);
    },
    HANG_MS,
  );

  it(
    'reads a file sandboxed, and refuses one outside the sandbox',
    async () => {
      const workspace = join(base, 'ws');
      mkdirSync(workspace);
      writeFileSync(join(workspace, 'note.txt'), 'installed with npm\n');
      writeFileSync(join(base, 'outside.txt'), 'not for the sandbox\n');
      const read = await npx([
        'cat',
        '--profile',
        'read-only',
        '--cwd',
        workspace,
        join(workspace, 'note.txt'),
      ]);
      expect(read.code, output('npx fs-sandbox cat', read)).toBe(0);
      expect(read.stdout).toBe('installed with npm\n');
      const refused = await npx(['write', '--cwd', workspace, join(base, 'outside.txt'), 'x']);
      expect(refused.code, output('npx fs-sandbox write outside', refused)).toBe(1);
      expect(refused.stderr).toMatch(/\[permission_denied\]\n$/);
      expect(readFileSync(join(base, 'outside.txt'), 'utf8')).toBe('not for the sandbox\n');
    },
    HANG_MS,
  );

  it(
    'serves MCP: npx fs-sandbox mcp DIR answers tools/list',
    async () => {
      const workspace = join(base, 'mcp-ws');
      mkdirSync(workspace);
      const client = new Client({ name: 'fs-sandbox-npm-consumer', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: 'npx',
          args: ['--no', 'fs-sandbox', 'mcp', workspace],
          cwd: project,
          env: env as Record<string, string>,
          stderr: 'ignore',
        }),
      );
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(
          expect.arrayContaining(['read_text_file', 'write_file', 'list_directory']),
        );
      } finally {
        await client.close();
      }
    },
    HANG_MS,
  );
});
