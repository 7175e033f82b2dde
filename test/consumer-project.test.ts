import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
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
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, newestMtime, REPO } from './support/build.js';

/**
 * The packages as another project gets them: `pnpm pack` the four workspace packages, install the
 * broker and the CLI into a fresh project outside the workspace (in the OS temp dir), type-check a consumer
 * (test/fixtures/consumer/consumer.ts) against the shipped .d.ts under node16, nodenext and
 * bundler resolution with strict settings and skipLibCheck off, then run it: a real sandboxed
 * write and read through the installed library, and the installed CLI.
 *
 * The install is a real `pnpm install` of `@fs-sandbox/broker@<version>`, offline: a registry on
 * 127.0.0.1, run by this test, serves the three tarballs and, for every third-party package, the
 * metadata of the version the workspace lockfile pins (read from its installed package.json), with
 * the lockfile's integrity. pnpm finds those packages in the pnpm store the workspace installed from
 * (`pnpm store path`) and never downloads them; a package missing from the store is a clear 404.
 */

const PACKAGES = ['policy', 'helper', 'broker', 'cli'] as const;
const FIXTURES = join(REPO, 'test/fixtures/consumer');
/** The library's command example: docs/library.md shows this file whole. */
const COMMANDS_EXAMPLE = join(FIXTURES, 'commands.ts');
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');

interface Packed {
  name: string;
  version: string;
  file: string;
  tarball: Buffer;
  manifest: Record<string, unknown> & { dependencies?: Record<string, string> };
  files: Map<string, number>;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * How long a step here may take before it counts as hung: pnpm pack and install, and three full
 * tsc runs side by side with skipLibCheck off. On a 2-core machine under load (a second test run
 * beside this one) the type-checks took over 100 s; this bounds a hang, it measures nothing.
 */
const HANG_MS = 300_000;

/** A child process run asynchronously (the registry answers on this process's event loop). */
function run(file: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { ...options, maxBuffer: 64 * 1024 * 1024, timeout: HANG_MS },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({
          code,
          stdout,
          stderr: `${stderr}${error !== null && code === 1 ? `\n${error.message}` : ''}`,
        });
      },
    );
  });
}

const output = (what: string, result: Run) =>
  `${what} exited ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;

/** pnpm without the settings of a pnpm that may be running this test (`pnpm test` sets npm_config_*). */
function pnpmEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm|pnpm)_/i.test(key)));
  return { ...env, npm_config_update_notifier: 'false' };
}

/** What is packed is dist: rebuilt (the root build, with the .d.ts) when older than any source. */
async function ensurePackagesBuilt(): Promise<void> {
  ensureBuilt();
  const sources = Math.max(...PACKAGES.map((name) => newestMtime(join(REPO, 'packages', name, 'src'))));
  const outputs = PACKAGES.flatMap((name) =>
    (name === 'cli' ? ['dist/cli.cjs'] : ['dist/index.js', 'dist/types/index.d.ts']).map((file) =>
      join(REPO, 'packages', name, file),
    ),
  );
  const stale = outputs.some((file) => {
    try {
      return statSync(file).mtimeMs < sources;
    } catch {
      return true;
    }
  });
  if (!stale) return;
  const build = await run('pnpm', ['run', 'build'], { cwd: REPO, env: pnpmEnv() });
  if (build.code !== 0) throw new Error(output('pnpm run build', build));
}

/** The regular files of a .tgz and their sizes (ustar: 512-byte headers, names up to 255 bytes). */
function tarEntries(tgz: Buffer): Map<string, Buffer> {
  const tar = gunzipSync(tgz);
  const entries = new Map<string, Buffer>();
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start: number, length: number) =>
      header.toString('latin1', start, start + length).replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const prefix = field(345, 155);
    const name = prefix === '' ? field(0, 100) : `${prefix}/${field(0, 100)}`;
    const type = field(156, 1);
    if (type === '0' || type === '')
      entries.set(name.replace(/^package\//, ''), tar.subarray(offset + 512, offset + 512 + size));
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

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

/** name@version → integrity, for every package the workspace lockfile pins. */
function lockfileIntegrities(): Map<string, string> {
  const lockfile = readFileSync(join(REPO, 'pnpm-lock.yaml'), 'utf8');
  const integrities = new Map<string, string>();
  const entry =
    /^ {2}'?((?:@[^@\s/']+\/)?[^@\s']+)@([^\s'(:]+)'?:\n {4}resolution: \{integrity: ([^,}\s]+)/gm;
  for (const match of lockfile.matchAll(entry))
    integrities.set(`${match[1]}@${match[2]}`, match[3] as string);
  return integrities;
}

/** The manifests of the third-party packages the workspace installed, by name then version. */
function installedManifests(): Map<string, Map<string, Record<string, unknown>>> {
  const store = join(REPO, 'node_modules/.pnpm');
  const byName = new Map<string, Map<string, Record<string, unknown>>>();
  for (const dir of readdirSync(store)) {
    const at = dir.indexOf('@', 1);
    if (at < 0) continue;
    const name = dir.slice(0, at).replace('+', '/');
    try {
      const manifest = JSON.parse(
        readFileSync(join(store, dir, 'node_modules', name, 'package.json'), 'utf8'),
      );
      const versions = byName.get(name) ?? new Map();
      versions.set(manifest.version, manifest);
      byName.set(name, versions);
    } catch {
      // not a package folder
    }
  }
  return byName;
}

const PACKUMENT_FIELDS = [
  'name',
  'version',
  'dependencies',
  'optionalDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'bin',
  'engines',
  'os',
  'cpu',
  'libc',
];

/** A registry on 127.0.0.1 for exactly the packed packages and the workspace's pinned ones. */
async function startRegistry(packed: Packed[]): Promise<{ server: Server; url: string; misses: string[] }> {
  const integrities = lockfileIntegrities();
  const installed = installedManifests();
  const misses: string[] = [];
  let url = '';
  const packuments = new Map<string, object>();
  const tarballs = new Map<string, Buffer>();
  const version = (manifest: Record<string, unknown>, dist: object) => ({
    ...Object.fromEntries(
      PACKUMENT_FIELDS.filter((key) => key in manifest).map((key) => [key, manifest[key]]),
    ),
    dist,
  });
  function packument(name: string): object | undefined {
    const own = packed.find((pkg) => pkg.name === name);
    if (own !== undefined) {
      const integrity = `sha512-${createHash('sha512').update(own.tarball).digest('base64')}`;
      tarballs.set(own.file, own.tarball);
      const dist = { integrity, tarball: `${url}/-/tarballs/${own.file}` };
      return {
        name,
        'dist-tags': { latest: own.version },
        versions: { [own.version]: version(own.manifest, dist) },
      };
    }
    const versions = installed.get(name);
    if (versions === undefined) return undefined;
    const entries = [...versions].flatMap(([number, manifest]) => {
      const integrity = integrities.get(`${name}@${number}`);
      if (integrity === undefined) return [];
      return [
        [number, version(manifest, { integrity, tarball: `${url}/-/not-in-store/${name}@${number}.tgz` })],
      ];
    });
    if (entries.length === 0) return undefined;
    const latest = entries.at(-1)?.[0] as string;
    return { name, 'dist-tags': { latest }, versions: Object.fromEntries(entries) };
  }
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://registry').pathname).slice(1);
    const tarball = path.startsWith('-/tarballs/')
      ? tarballs.get(path.slice('-/tarballs/'.length))
      : undefined;
    if (tarball !== undefined) {
      response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tarball);
      return;
    }
    const found = path.startsWith('-/') ? undefined : (packuments.get(path) ?? packument(path));
    if (found === undefined) {
      misses.push(path);
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: `${path}: not here` }));
      return;
    }
    packuments.set(path, found);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(found));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, url, misses };
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
  let registry: Awaited<ReturnType<typeof startRegistry>> | undefined;
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
    const packs = await Promise.all(
      PACKAGES.map((name) =>
        run('pnpm', ['pack', '--pack-destination', tarballDir], {
          cwd: join(REPO, 'packages', name),
          env: pnpmEnv(),
        }),
      ),
    );
    packs.forEach((result, index) => {
      if (result.code !== 0) throw new Error(output(`pnpm pack (${PACKAGES[index]})`, result));
    });
    timings.pack = Date.now() - start;
    packed = readdirSync(tarballDir).map((file) => {
      const tarball = readFileSync(join(tarballDir, file));
      const entries = tarEntries(tarball);
      const manifest = JSON.parse((entries.get('package.json') as Buffer).toString('utf8'));
      const files = new Map([...entries].map(([name, data]) => [name, data.length]));
      return { name: manifest.name, version: manifest.version, file, tarball, manifest, files };
    });

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
    registry = await startRegistry(packed);
    const storeDir = await run('pnpm', ['store', 'path'], { cwd: REPO, env: pnpmEnv() });
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
      { cwd: project, env: pnpmEnv() },
    );
    timings.install = Date.now() - start;
    if (install.code !== 0) {
      throw new Error(`${output('pnpm install', install)}\nregistry 404s: ${registry.misses.join(', ')}`);
    }
    const names = Object.keys(CONFIGS) as ConfigName[];
    checks = Object.fromEntries(
      names.map((name) => [
        name,
        run(process.execPath, [TSC, '-p', `tsconfig.${name}.json`], { cwd: project }),
      ]),
    ) as Record<ConfigName, Promise<Run>>;
  }, HANG_MS);

  afterAll(async () => {
    await new Promise((resolve) =>
      registry === undefined ? resolve(undefined) : registry.server.close(resolve),
    );
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
      expect(
        manifestTargets(pkg.manifest).filter((target) => !pkg.files.has(target)),
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
