import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ensureBuilt, newestMtime, REPO } from './build.js';

/**
 * The workspace's packages as another project gets them: packed with `pnpm pack` (what `pnpm
 * publish` uploads) and served, with the third-party packages they depend on, by a registry on
 * 127.0.0.1 that this process runs, so a fresh project installs them with a real package manager
 * and nothing is fetched from the network.
 */

/** The published packages, by folder under packages/ (every one there is published). */
export const PUBLISHED = readdirSync(join(REPO, 'packages')).filter((name) =>
  existsSync(join(REPO, 'packages', name, 'package.json')),
);

/** The packages with code of their own (the per-platform Bun helper packages carry only a binary). */
const BUILT = ['policy', 'helper', 'broker', 'cli'] as const;

/**
 * How long a step may take before it counts as hung: a pack, an install, a full tsc with
 * skipLibCheck off. On a 2-core machine under load (a second test run beside this one) type-checks
 * took over 100 s; this bounds a hang, it measures nothing.
 */
export const HANG_MS = 300_000;

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Packed {
  name: string;
  version: string;
  file: string;
  tarball: Buffer;
  manifest: Record<string, unknown> & { dependencies?: Record<string, string> };
  /** Each regular file's size in bytes. */
  files: Map<string, number>;
  /** Each regular file's mode bits as packed. */
  modes: Map<string, number>;
}

/** A child process run asynchronously (the registry answers on this process's event loop). */
export function run(
  file: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<Run> {
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

export const output = (what: string, result: Run) =>
  `${what} exited ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;

/**
 * The environment without the settings of a package manager that may be running this test (`pnpm
 * test` sets npm_config_*, which npm and pnpm would both take; Yarn takes YARN_*).
 */
export function packageManagerEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(npm|pnpm|yarn)_/i.test(key)),
  );
  return { ...env, npm_config_update_notifier: 'false' };
}

/** What is packed is dist: rebuilt (the root build, with the .d.ts) when older than any source. */
export async function ensurePackagesBuilt(): Promise<void> {
  ensureBuilt();
  const sources = Math.max(...BUILT.map((name) => newestMtime(join(REPO, 'packages', name, 'src'))));
  const outputs = BUILT.flatMap((name) =>
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
  const build = await run('pnpm', ['run', 'build'], { cwd: REPO, env: packageManagerEnv() });
  if (build.code !== 0) throw new Error(output('pnpm run build', build));
}

/** The regular files of a .tgz with their modes (ustar: 512-byte headers, names up to 255 bytes). */
export function tarEntries(tgz: Buffer): Map<string, { data: Buffer; mode: number }> {
  const tar = gunzipSync(tgz);
  const entries = new Map<string, { data: Buffer; mode: number }>();
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start: number, length: number) =>
      header.toString('latin1', start, start + length).replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const mode = Number.parseInt(field(100, 8).trim() || '0', 8);
    const prefix = field(345, 155);
    const name = prefix === '' ? field(0, 100) : `${prefix}/${field(0, 100)}`;
    const type = field(156, 1);
    if (type === '0' || type === '')
      entries.set(name.replace(/^package\//, ''), {
        data: tar.subarray(offset + 512, offset + 512 + size),
        mode,
      });
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

/** `pnpm pack` of every published package into `dir`, side by side. */
export async function packAll(dir: string): Promise<Packed[]> {
  const packs = await Promise.all(
    PUBLISHED.map((name) =>
      run('pnpm', ['pack', '--pack-destination', dir], {
        cwd: join(REPO, 'packages', name),
        env: packageManagerEnv(),
      }),
    ),
  );
  packs.forEach((result, index) => {
    if (result.code !== 0) throw new Error(output(`pnpm pack (${PUBLISHED[index]})`, result));
  });
  return readdirSync(dir).map((file) => {
    const tarball = readFileSync(join(dir, file));
    const entries = tarEntries(tarball);
    const packedManifest = entries.get('package.json');
    if (packedManifest === undefined) throw new Error(`${file} has no package.json`);
    const manifest = JSON.parse(packedManifest.data.toString('utf8'));
    return {
      name: manifest.name,
      version: manifest.version,
      file,
      tarball,
      manifest,
      files: new Map([...entries].map(([name, entry]) => [name, entry.data.length])),
      modes: new Map([...entries].map(([name, entry]) => [name, entry.mode])),
    };
  });
}

/** What the workspace lockfile says of one package version: its integrity and platform fields. */
interface Locked {
  integrity: string;
  os?: string[];
  cpu?: string[];
  libc?: string[];
}

/** name@version → its lockfile entry, for every package the workspace lockfile pins. */
function lockfileEntries(): Map<string, Locked> {
  const lockfile = readFileSync(join(REPO, 'pnpm-lock.yaml'), 'utf8');
  const entries = new Map<string, Locked>();
  const entry =
    /^ {2}'?((?:@[^@\s/']+\/)?[^@\s']+)@([^\s'(:]+)'?:\n {4}resolution: \{integrity: ([^,}\s]+)\}\n((?: {4}\S.*\n)*)/gm;
  for (const match of lockfile.matchAll(entry)) {
    const locked: Locked = { integrity: match[3] as string };
    for (const field of (match[4] as string).matchAll(/^ {4}(os|cpu|libc): \[([^\]]*)\]$/gm))
      locked[field[1] as 'os' | 'cpu' | 'libc'] = (field[2] as string)
        .split(',')
        .map((value) => value.trim());
    entries.set(`${match[1]}@${match[2]}`, locked);
  }
  return entries;
}

interface Installed {
  manifest: Record<string, unknown>;
  /** The installed package's folder (its files as the registry's tarball had them). */
  dir: string;
}

/** The third-party packages the workspace installed, by name then version. */
function installedPackages(): Map<string, Map<string, Installed>> {
  const store = join(REPO, 'node_modules/.pnpm');
  const byName = new Map<string, Map<string, Installed>>();
  for (const entry of readdirSync(store)) {
    const at = entry.indexOf('@', 1);
    if (at < 0) continue;
    const name = entry.slice(0, at).replace('+', '/');
    const dir = join(store, entry, 'node_modules', name);
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      const versions = byName.get(name) ?? new Map();
      versions.set(manifest.version, { manifest, dir });
      byName.set(name, versions);
    } catch {
      // not a package folder
    }
  }
  return byName;
}

/**
 * The installed folder of a third-party package as a registry tarball: `package/` and its files
 * (pnpm's store links identical files to one inode: each is written whole, never as a tar hard link).
 */
async function tarballOf(dir: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      'tar',
      [
        '-czf',
        '-',
        '--hard-dereference',
        '--owner=0',
        '--group=0',
        '--numeric-owner',
        '--transform',
        's,^\\.,package,',
        '-C',
        dir,
        '.',
      ],
      { encoding: 'buffer', maxBuffer: 512 * 1024 * 1024 },
      (error, stdout) => (error === null ? resolve(stdout) : reject(error)),
    );
  });
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

const integrityOf = (tarball: Buffer) => `sha512-${createHash('sha512').update(tarball).digest('base64')}`;

export interface Registry {
  server: Server;
  url: string;
  /** Every name asked for and not served (a 404). */
  misses: string[];
  close(): Promise<void>;
}

/**
 * A registry on 127.0.0.1 for exactly the packed packages and the workspace's pinned ones. The
 * third-party packages come in one of two ways:
 *  - `store`: the metadata of the version the workspace lockfile pins, with the lockfile's
 *    integrity and a tarball URL that 404s. pnpm finds them in the pnpm store the workspace
 *    installed from (`--store-dir`) and never downloads them.
 *  - `installed`: each package's installed folder in the workspace, packed on first request, with
 *    that tarball's integrity: what npm, which has no such store, downloads.
 * A package the lockfile pins for another platform only is served as metadata whose tarball 404s;
 * anything else is a 404.
 */
export async function startRegistry(packed: Packed[], thirdParty: 'store' | 'installed'): Promise<Registry> {
  const locked = lockfileEntries();
  const installed = installedPackages();
  const misses: string[] = [];
  let url = '';
  const packuments = new Map<string, object | undefined>();
  const tarballs = new Map<string, Buffer>();
  const version = (manifest: Record<string, unknown>, dist: object) => ({
    ...Object.fromEntries(
      PACKUMENT_FIELDS.filter((key) => key in manifest).map((key) => [key, manifest[key]]),
    ),
    dist,
  });
  /**
   * A package the lockfile pins but the workspace did not install: another platform's binary
   * package. Its metadata (platform fields, integrity) with a tarball URL that 404s, as a package
   * manager that asks for every optional dependency's metadata before it skips the ones for other
   * platforms (yarn) needs; none downloads it.
   */
  function lockedOnly(name: string): object | undefined {
    const entries = [...locked]
      .filter(([key]) => key.startsWith(`${name}@`) && key.indexOf('@', 1) === name.length)
      .map(([key, { integrity, ...platform }]) => {
        const number = key.slice(name.length + 1);
        const dist = { integrity, tarball: `${url}/-/other-platform/${name}@${number}.tgz` };
        return [number, { name, version: number, ...platform, dist }] as const;
      });
    if (entries.length === 0) return undefined;
    const latest = entries.at(-1)?.[0] as string;
    return { name, 'dist-tags': { latest }, versions: Object.fromEntries(entries) };
  }
  async function packument(name: string): Promise<object | undefined> {
    const own = packed.find((pkg) => pkg.name === name);
    if (own !== undefined) {
      tarballs.set(own.file, own.tarball);
      const dist = { integrity: integrityOf(own.tarball), tarball: `${url}/-/tarballs/${own.file}` };
      return {
        name,
        'dist-tags': { latest: own.version },
        versions: { [own.version]: version(own.manifest, dist) },
      };
    }
    const versions = installed.get(name);
    if (versions === undefined) return lockedOnly(name);
    const entries: Array<[string, object]> = [];
    for (const [number, { manifest, dir }] of versions) {
      if (thirdParty === 'store') {
        const integrity = locked.get(`${name}@${number}`)?.integrity;
        if (integrity === undefined) continue;
        entries.push([
          number,
          version(manifest, { integrity, tarball: `${url}/-/not-in-store/${name}@${number}.tgz` }),
        ]);
      } else {
        const file = `${name.replace('/', '+')}-${number}.tgz`;
        const tarball = await tarballOf(dir);
        tarballs.set(file, tarball);
        entries.push([
          number,
          version(manifest, { integrity: integrityOf(tarball), tarball: `${url}/-/tarballs/${file}` }),
        ]);
      }
    }
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
    const answer = async () => {
      if (path.startsWith('-/')) return undefined;
      if (!packuments.has(path)) packuments.set(path, await packument(path));
      return packuments.get(path);
    };
    answer().then(
      (found) => {
        if (found === undefined) {
          misses.push(path);
          response
            .writeHead(404, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: `${path}: not here` }));
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(found));
      },
      (error: unknown) => response.writeHead(500).end(String(error)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    server,
    url,
    misses,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
