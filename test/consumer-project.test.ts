import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from './support/build.js';
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
 * The packages as another project gets them: `pnpm pack` every workspace package, install the
 * broker and the CLI into a fresh project outside the workspace (in the OS temp dir), type-check a consumer
 * (test/fixtures/consumer/consumer.ts) against the shipped .d.ts under node16, nodenext and
 * bundler resolution with strict settings and skipLibCheck off, then run it: a real sandboxed
 * write and read through the installed library, and the installed CLI.
 *
 * The install is a real `pnpm install` of `@fs-sandbox/broker@<version>`, offline: a registry on
 * 127.0.0.1, run by this test, serves the tarballs and, for every third-party package, the
 * metadata of the version the workspace lockfile pins (read from its installed package.json), with
 * the lockfile's integrity. pnpm finds those packages in the pnpm store the workspace installed from
 * (`pnpm store path`) and never downloads them; a package missing from the store is a clear 404.
 * test/packaged-install.test.ts installs the same tarballs with npm and runs the program.
 */

const FIXTURES = join(REPO, 'test/fixtures/consumer');
/** The library's command example: docs/library.md shows this file whole. */
const COMMANDS_EXAMPLE = join(FIXTURES, 'commands.ts');
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');

/** Every file a manifest's exports and bin name (the targets that must be in the tarball). */
function manifestTargets(manifest: Record<string, unknown>): string[] {
  const targets: string[] = [];
  const walk = (value: unknown) => {
    if (typeof value === 'string') targets.push(value.replace(/^\.\//, ''));
    else if (typeof value === 'object' && value !== null)
      for (const inner of Object.values(value)) walk(inner);
  };
  walk(manifest.exports);
  walk(manifest.bin);
  return targets;
}

const CONFIGS = {
  node16: { module: 'node16', moduleResolution: 'node16' },
  nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
} as const;
type ConfigName = keyof typeof CONFIGS;

describe('a project outside the workspace that installs the packed packages', () => {
  let base: string;
  let project: string;
  let packed: Packed[];
  let registry: Registry | undefined;
  // The three type-checks run side by side (each is a full tsc with skipLibCheck off).
  let checks = {} as Record<ConfigName, Promise<Run>>;
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    await ensurePackagesBuilt();
    base = mkdtempSync(join(tmpdir(), 'fs-sandbox-consumer-'));
    const tarballDir = join(base, 'tarballs');
    project = join(base, 'project');
    mkdirSync(tarballDir);
    mkdirSync(project);

    let start = Date.now();
    packed = await packAll(tarballDir);
    timings.pack = Date.now() - start;

    const rootManifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
    const versionOf = (name: string) => packed.find((pkg) => pkg.name === name)?.version;
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({
        name: 'fs-sandbox-consumer',
        private: true,
        type: 'module',
        dependencies: {
          '@fs-sandbox/broker': versionOf('@fs-sandbox/broker'),
          '@fs-sandbox/cli': versionOf('@fs-sandbox/cli'),
        },
        devDependencies: { '@types/node': rootManifest.devDependencies['@types/node'] },
      }),
    );
    for (const file of ['consumer.ts', 'commands.ts'])
      copyFileSync(join(FIXTURES, file), join(project, file));
    for (const [name, options] of Object.entries(CONFIGS)) {
      const compilerOptions = {
        ...options,
        target: 'es2022',
        lib: ['es2022'],
        strict: true,
        exactOptionalPropertyTypes: true,
        noPropertyAccessFromIndexSignature: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: false,
        types: ['node'],
        ...(name === 'nodenext' ? { outDir: 'out' } : { noEmit: true }),
      };
      writeFileSync(
        join(project, `tsconfig.${name}.json`),
        JSON.stringify({ compilerOptions, files: ['consumer.ts', 'commands.ts'] }),
      );
    }

    start = Date.now();
    registry = await startRegistry(packed, 'store');
    const storeDir = await run('pnpm', ['store', 'path'], { cwd: REPO, env: packageManagerEnv() });
    if (storeDir.code !== 0) throw new Error(output('pnpm store path', storeDir));
    const install = await run(
      'pnpm',
      [
        'install',
        '--no-frozen-lockfile',
        `--registry=${registry.url}/`,
        `--store-dir=${storeDir.stdout.trim()}`,
        `--cache-dir=${join(base, 'pnpm-cache')}`,
        '--reporter=append-only',
      ],
      { cwd: project, env: packageManagerEnv() },
    );
    timings.install = Date.now() - start;
    if (install.code !== 0) {
      throw new Error(`${output('pnpm install', install)}\nregistry 404s: ${registry.misses.join(', ')}`);
    }
    const names = Object.keys(CONFIGS) as ConfigName[];
    // The nodenext check also lists the files it read and its figures (types, check time, memory).
    const extra = (name: ConfigName) => (name === 'nodenext' ? ['--listFiles', '--extendedDiagnostics'] : []);
    checks = Object.fromEntries(
      names.map((name) => [
        name,
        run(process.execPath, [TSC, '-p', `tsconfig.${name}.json`, ...extra(name)], { cwd: project }),
      ]),
    ) as Record<ConfigName, Promise<Run>>;
  }, HANG_MS);

  afterAll(async () => {
    await registry?.close();
    await Promise.allSettled(Object.values(checks));
    if (base !== undefined) rmSync(base, { recursive: true, force: true });
    process.stdout.write(`consumer project: pack ${timings.pack} ms, install ${timings.install} ms\n`);
  });

  it('packs dist, the bin and the declaration files, with no sources, tests or workspace: ranges', () => {
    for (const pkg of packed) {
      const names = [...pkg.files.keys()];
      expect(
        names.filter((name) => /^(src|test|scripts)\/|tsconfig|\.tsbuildinfo$|\.tmp$/.test(name)),
        pkg.name,
      ).toEqual([]);
      // Another platform's Bun helper package is a skeleton here: its binary is built on that platform.
      const otherPlatform = Array.isArray(pkg.manifest.cpu) && !pkg.manifest.cpu.includes(process.arch);
      expect(
        manifestTargets(pkg.manifest).filter((target) => !otherPlatform && !pkg.files.has(target)),
        `${pkg.name} targets`,
      ).toEqual([]);
      expect(JSON.stringify(pkg.manifest), pkg.name).not.toMatch(/workspace:|"source"/);
      for (const name of Object.keys(pkg.manifest.dependencies ?? {}).filter((dep) =>
        dep.startsWith('@fs-sandbox/'),
      )) {
        expect(pkg.manifest.dependencies?.[name], `${pkg.name} → ${name}`).toBe(
          packed.find((other) => other.name === name)?.version,
        );
      }
    }
    const broker = packed.find((pkg) => pkg.name === '@fs-sandbox/broker');
    expect([...(broker?.files.keys() ?? [])]).toEqual(
      expect.arrayContaining(['dist/index.js', 'dist/windows-launcher.js', 'dist/types/index.d.ts']),
    );
    // The library carries no program and none of the program's dependencies.
    const libraryDependencies = Object.keys(broker?.manifest.dependencies ?? {});
    expect(
      libraryDependencies.filter((name) => ['commander', '@modelcontextprotocol/sdk'].includes(name)),
    ).toEqual([]);
    const cli = packed.find((pkg) => pkg.name === '@fs-sandbox/cli');
    expect([...(cli?.files.keys() ?? [])]).toEqual(
      expect.arrayContaining([
        'bin/fs-sandbox.js',
        // Makes bin/fs-sandbox.js CommonJS: without it node starts the program as an ES module.
        'bin/package.json',
        'bin/load.cjs',
        'dist/cli.cjs',
        'dist/windows-launcher.js',
      ]),
    );
    const helper = packed.find((pkg) => pkg.name === '@fs-sandbox/helper');
    expect([...(helper?.files.keys() ?? [])]).toEqual(expect.arrayContaining(['dist/helper.cjs']));
  });

  it.each(Object.keys(CONFIGS) as ConfigName[])(
    'type-checks against the shipped declarations (%s)',
    async (name) => {
      const result = await checks[name];
      expect(result.code, output(`tsc -p tsconfig.${name}.json`, result)).toBe(0);
    },
    HANG_MS,
  );

  it('declares its types without zod: a consumer checking every declaration file checks none of zod’s', async () => {
    const result = await checks.nodenext;
    expect(result.code, output('tsc -p tsconfig.nodenext.json', result)).toBe(0);
    const files = result.stdout.split('\n').filter((line) => line.startsWith('/'));
    expect(files.filter((file) => file.includes('/@fs-sandbox/broker/'))).not.toEqual([]);
    expect(files.filter((file) => /\/zod\/|\/zod@/.test(file))).toEqual([]);
    const figure = (name: string) => result.stdout.match(new RegExp(`^${name}:\\s+(\\S+)`, 'm'))?.[1];
    process.stdout.write(
      `consumer type-check (nodenext, skipLibCheck off): ${figure('Files')} files, ${figure('Types')} types, check ${figure('Check time')}, memory ${figure('Memory used')}\n`,
    );
  });

  it(
    'runs: a sandboxed write and read through the installed library, a denied write refused',
    async () => {
      await checks.nodenext;
      const compiled = join(project, 'out/consumer.js');
      expect(
        statSync(compiled, { throwIfNoEntry: false }),
        'the nodenext type-check emits consumer.js',
      ).toBeDefined();
      const workspace = join(base, 'ws');
      const outside = join(base, 'outside');
      mkdirSync(workspace);
      mkdirSync(outside);
      const result = await run(process.execPath, [compiled, workspace, outside], { cwd: project });
      expect(result.code, output('node out/consumer.js', result)).toBe(0);
      const text = 'hello from another project\n';
      expect(JSON.parse(result.stdout)).toEqual({
        read: text,
        onDisk: text,
        size: Buffer.byteLength(text),
        sandboxed: true,
        backend: process.platform === 'linux' ? 'bwrap' : expect.any(String),
        denied: { kind: 'permission_denied', instanceOfFsError: true },
        badOptions: { kind: 'invalid_params', instanceOfFsError: true },
      });
      expect(readFileSync(join(workspace, 'hello.txt'), 'utf8')).toBe(text);
      expect(readdirSync(outside)).toEqual([]);
    },
    HANG_MS,
  );

  it('runs the command example from a shell holding an open descriptor: a denied write, a streamed command, a refusal', async () => {
    await checks.nodenext;
    const workspace = join(base, 'commands-ws');
    const outside = join(base, 'commands-outside');
    mkdirSync(workspace);
    mkdirSync(outside);
    // fd 251 open on the outside directory, not close-on-exec, as a shell's `exec 251<dir` leaves it.
    const result = await run(
      'bash',
      ['-c', 'exec 251<"$2"; exec "$0" out/commands.js "$1" "$2"', process.execPath, workspace, outside],
      { cwd: project },
    );
    expect(result.code, output('node out/commands.js', result)).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.written).toMatchObject({
      exitCode: 0,
      stdout: 'hello\n',
      sandboxed: true,
      timedOut: false,
    });
    expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('hello\n');
    expect(report.denied.exitCode).not.toBe(0);
    // The outside directory is not in the sandbox at all.
    expect(report.denied.stderr).toMatch(/Directory nonexistent|No such file/);
    expect(readdirSync(outside)).toEqual([]);
    expect(report.arrivals.map((arrival: { line: string }) => arrival.line)).toEqual([
      'got one',
      'got two',
      'got three',
    ]);
    // Streamed: the first line came well before the last (the command sleeps between them).
    const [first, , last] = report.arrivals as Array<{ afterMs: number }>;
    expect((last?.afterMs ?? 0) - (first?.afterMs ?? 0)).toBeGreaterThanOrEqual(300);
    expect(report.streamed).toEqual({ exitCode: 0, timedOut: false, capReached: false, sandboxed: true });
    expect(report.refused).toBe('permission_denied');
  });

  it('is the example docs/library.md shows, whole', () => {
    const docs = readFileSync(join(REPO, 'docs/library.md'), 'utf8');
    const example = readFileSync(COMMANDS_EXAMPLE, 'utf8');
    const blocks = [...docs.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
    expect(blocks).toContain(example);
  });

  it('runs the installed CLI', async () => {
    const workspace = join(base, 'cli-ws');
    mkdirSync(workspace);
    writeFileSync(join(workspace, 'note.txt'), 'from the cli\n');
    const cli = join(project, 'node_modules/.bin/fs-sandbox');
    const result = await run(
      cli,
      ['cat', '--profile', 'read-only', '--cwd', workspace, join(workspace, 'note.txt')],
      {
        cwd: project,
      },
    );
    expect(result.code, output('fs-sandbox cat', result)).toBe(0);
    expect(result.stdout).toBe('from the cli\n');
  });
});
