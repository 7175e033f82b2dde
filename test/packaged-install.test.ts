import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
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
  type Run,
  run,
  startRegistry,
} from './support/packed-packages.js';

/**
 * Installed as a new user installs it: every package packed with `pnpm pack`, served by a registry
 * on 127.0.0.1 (the third-party packages as the workspace installed them, nothing from the network),
 * installed into a fresh project per package manager — `npm install`, `pnpm add` and Yarn 4's
 * `yarn add` (its default Plug'n'Play layout: no node_modules, packages read from zip archives) of
 * `@fs-sandbox/cli @fs-sandbox/broker` — then run through that manager: `doctor` with the Bun
 * helper passing its self-check, a sandboxed read and a refused write; with npm also `mcp DIR`
 * answering tools/list. The Bun helper comes as this platform's package
 * (`@fs-sandbox/helper-linux-x64`), an optional dependency of `@fs-sandbox/helper`, which itself
 * carries no binary. The three projects share the tarballs and the registry.
 */

/** The Bun helper runs only on Linux x64/arm64, where its package is built (packages/helper-linux-*). */
const BUN_PLATFORM = process.platform === 'linux' && ['x64', 'arm64'].includes(process.arch);
const BUN_PACKAGE = `@fs-sandbox/helper-${process.platform}-${process.arch}`;
const OTHER_BUN_PACKAGE = `@fs-sandbox/helper-linux-${process.arch === 'x64' ? 'arm64' : 'x64'}`;
/** Everything @fs-sandbox/helper ships is JavaScript and declarations, a few hundred KB packed. */
const HELPER_PACKED_MAX_BYTES = 1024 * 1024;
/** Yarn 4 as the npm package that carries it whole (test/package.json pins it). */
const YARN = createRequire(import.meta.url).resolve('@yarnpkg/cli-dist/bin/yarn.js');

/** Runs the installed `fs-sandbox` the way a user of that package manager does. */
type FsSandbox = (args: string[], extraEnv?: NodeJS.ProcessEnv) => Promise<Run>;

describe.runIf(BUN_PLATFORM)('fresh projects that install the packed packages', () => {
  let base: string;
  let packed: Packed[];
  let registry: Registry | undefined;
  const installMs: Record<string, number> = {};

  beforeAll(async () => {
    await ensurePackagesBuilt();
    base = mkdtempSync(join(tmpdir(), 'fs-sandbox-installs-'));
    mkdirSync(join(base, 'tarballs'));
    packed = await packAll(join(base, 'tarballs'));
    registry = await startRegistry(packed, 'installed');
    // A build and a pack of the 110 MB binary, each bounded by HANG_MS.
  }, 2 * HANG_MS);

  afterAll(async () => {
    await registry?.close();
    if (base !== undefined) rmSync(base, { recursive: true, force: true });
    const sizes = packed?.map((pkg) => `${pkg.name} ${pkg.tarball.length} B`).join(', ');
    const times = Object.entries(installMs).map(([manager, ms]) => `${manager} ${ms} ms`);
    process.stdout.write(`fresh projects: install ${times.join(', ')}; packed ${sizes}\n`);
  });

  const versionOf = (name: string) => packed.find((pkg) => pkg.name === name)?.version;
  const entryPoints = () =>
    ['@fs-sandbox/cli', '@fs-sandbox/broker'].map((name) => `${name}@${versionOf(name)}`);

  /** A fresh project folder with an ES module package.json. */
  function freshProject(manager: string): string {
    const project = join(base, manager);
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: `fs-sandbox-${manager}-consumer`, private: true, type: 'module' }),
    );
    return project;
  }

  /** One install, timed; a failure names the registry's 404s. */
  async function install(manager: string, command: () => Promise<Run>): Promise<void> {
    const start = Date.now();
    const result = await command();
    installMs[manager] = Date.now() - start;
    if (result.code !== 0) {
      throw new Error(
        `${output(`${manager} install`, result)}\nregistry 404s: ${registry?.misses.join(', ')}`,
      );
    }
  }

  /**
   * `doctor`: the Bun helper passes its self-check and a sandboxed operation works, with nothing to
   * warn about. Returns the Bun helper doctor ran, which must lie in the project and be executable.
   */
  async function expectDoctorPasses(fsSandbox: FsSandbox, project: string): Promise<string> {
    const doctor = await fsSandbox(['doctor']);
    expect(doctor.code, output('fs-sandbox doctor', doctor)).toBe(0);
    expect(doctor.stdout).toMatch(/^helper runtime +ok +bun\s/m);
    expect(doctor.stdout).toMatch(/^sandboxed operation +ok /m);
    expect(doctor.stdout).not.toMatch(/WARN|FAIL/);
    // The table wraps long details, within words too: read it without any white space.
    const bunHelper = doctor.stdout
      .replace(/\s+/g, '')
      .match(/helperruntimeokbun(\/\S+?)\(theBunhelperisinstalled;itpassedtheself-check\)/)?.[1];
    expect(bunHelper, doctor.stdout).toMatch(
      /\/node_modules\/@fs-sandbox\/helper-linux-\w+\/bin\/helper-bun$/,
    );
    expect(bunHelper?.startsWith(`${realpathSync(project)}/`), bunHelper).toBe(true);
    expect(() => accessSync(bunHelper as string, constants.X_OK)).not.toThrow();
    return bunHelper as string;
  }

  /** `cat` of a file in a workspace works sandboxed; `write` outside it is refused and changes nothing. */
  async function expectSandboxedRead(fsSandbox: FsSandbox, label: string, extraEnv: NodeJS.ProcessEnv = {}) {
    const workspace = join(base, `${label}-ws`);
    const outside = join(base, `${label}-outside.txt`);
    mkdirSync(workspace);
    writeFileSync(join(workspace, 'note.txt'), `installed with ${label}\n`);
    writeFileSync(outside, 'not for the sandbox\n');
    const read = await fsSandbox(
      ['cat', '--profile', 'read-only', '--cwd', workspace, join(workspace, 'note.txt')],
      extraEnv,
    );
    expect(read.code, output('fs-sandbox cat', read)).toBe(0);
    expect(read.stdout).toBe(`installed with ${label}\n`);
    const refused = await fsSandbox(['write', '--cwd', workspace, outside, 'x'], extraEnv);
    expect(refused.code, output('fs-sandbox write outside', refused)).toBe(1);
    expect(refused.stderr).toMatch(/\[permission_denied\]\n$/);
    expect(readFileSync(outside, 'utf8')).toBe('not for the sandbox\n');
  }

  describe('with npm', () => {
    let project: string;
    let env: NodeJS.ProcessEnv;
    const npx: FsSandbox = (args) => run('npx', ['--no', 'fs-sandbox', ...args], { cwd: project, env });

    beforeAll(async () => {
      project = freshProject('npm');
      // A cache of its own: nothing installed from an earlier run or from the network.
      env = {
        ...packageManagerEnv(),
        npm_config_registry: `${registry?.url}/`,
        npm_config_cache: join(base, 'npm-cache'),
        npm_config_audit: 'false',
        npm_config_fund: 'false',
      };
      await install('npm', () => run('npm', ['install', ...entryPoints()], { cwd: project, env }));
    }, HANG_MS);

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
      expect(() => accessSync(join(project, 'node_modules', OTHER_BUN_PACKAGE))).toThrow();
      expect(() => accessSync(join(project, 'node_modules', '@oven'))).toThrow();
    });

    it(
      'doctor: the Bun helper passes its self-check, and sandboxed operations work',
      async () => {
        const bunHelper = await expectDoctorPasses(npx, project);
        expect(bunHelper).toBe(realpathSync(join(project, 'node_modules', BUN_PACKAGE, 'bin', 'helper-bun')));
      },
      HANG_MS,
    );

    it(
      'reads a file sandboxed, and refuses one outside the sandbox',
      () => expectSandboxedRead(npx, 'npm'),
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

  describe('with pnpm (its strict node_modules: the helper sees its optional dependency, the CLI does not)', () => {
    let project: string;
    const env = packageManagerEnv();
    const pnpmExec: FsSandbox = (args, extraEnv = {}) =>
      run('pnpm', ['exec', 'fs-sandbox', ...args], { cwd: project, env: { ...env, ...extraEnv } });

    beforeAll(async () => {
      project = freshProject('pnpm');
      // A store and a cache of its own: every package downloaded from the registry, as on a fresh machine.
      await install('pnpm', () =>
        run(
          'pnpm',
          [
            'add',
            ...entryPoints(),
            `--registry=${registry?.url}/`,
            `--store-dir=${join(base, 'pnpm-store')}`,
            `--cache-dir=${join(base, 'pnpm-cache')}`,
            '--reporter=append-only',
          ],
          { cwd: project, env },
        ),
      );
    }, HANG_MS);

    it(
      'doctor: the Bun helper, installed once for this platform, passes its self-check',
      async () => {
        await expectDoctorPasses(pnpmExec, project);
        const virtualStore = readdirSync(join(project, 'node_modules/.pnpm'));
        expect(virtualStore.filter((entry) => entry.startsWith('@fs-sandbox+helper-linux-'))).toEqual([
          `${BUN_PACKAGE.replace('/', '+')}@${versionOf(BUN_PACKAGE)}`,
        ]);
      },
      HANG_MS,
    );

    it(
      'reads a file sandboxed, and refuses one outside the sandbox',
      () => expectSandboxedRead(pnpmExec, 'pnpm'),
      HANG_MS,
    );
  });

  describe('with Yarn 4 (Plug’n’Play: packages stay in zip archives unless unplugged)', () => {
    let project: string;
    const env = packageManagerEnv();
    const yarn = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
      run(process.execPath, [YARN, ...args], { cwd: project, env: { ...env, ...extraEnv } });
    const yarnRun: FsSandbox = (args, extraEnv) => yarn(['fs-sandbox', ...args], extraEnv);

    beforeAll(async () => {
      project = freshProject('yarn');
      // An empty yarn.lock makes this folder the project's root, as `yarn init` does.
      writeFileSync(join(project, 'yarn.lock'), '');
      writeFileSync(
        join(project, '.yarnrc.yml'),
        [
          `npmRegistryServer: "${registry?.url}"`,
          'unsafeHttpWhitelist: ["127.0.0.1"]',
          // Everything Yarn keeps lies in the project: no global cache, mirror or metadata in $HOME.
          'enableGlobalCache: false',
          'enableMirror: false',
          `globalFolder: "${join(base, 'yarn-global')}"`,
          'enableTelemetry: false',
          // A package published a moment ago (as these are) is otherwise quarantined.
          'npmMinimalAgeGate: 0',
          // CI=true would make the install immutable, refusing to write the lockfile it creates.
          'enableImmutableInstalls: false',
          '',
        ].join('\n'),
      );
      await install('yarn', () => yarn(['add', ...entryPoints()]));
    }, HANG_MS);

    it(
      'doctor: the Bun helper, unplugged for this platform only, passes its self-check',
      async () => {
        const bunHelper = await expectDoctorPasses(yarnRun, project);
        expect(bunHelper.startsWith(`${realpathSync(project)}/.yarn/unplugged/`), bunHelper).toBe(true);
        expect(
          readdirSync(join(project, '.yarn/cache')).filter((zip) =>
            zip.includes(OTHER_BUN_PACKAGE.slice(1).replace('/', '-')),
          ),
        ).toEqual([]);
      },
      HANG_MS,
    );

    it(
      'reads a file sandboxed, and refuses one outside the sandbox, with the Bun helper and with the node one',
      async () => {
        await expectSandboxedRead(yarnRun, 'yarn');
        // The node helper is a file node runs inside the sandbox: it must be a real file, not a zip entry.
        await expectSandboxedRead(yarnRun, 'yarn-node', { FS_SANDBOX_HELPER_RUNTIME: 'node' });
      },
      HANG_MS,
    );
  });
});
