// Named imports, not `* as fs`: the bundler's namespace interop would copy all of node:fs's
// properties on every helper start (~0.5 ms).
import {
  type BigIntStats,
  close as closeCallback,
  closeSync,
  type Dir,
  fchmod as fchmodCallback,
  fchmodSync,
  fchown as fchownCallback,
  fchownSync,
  fstat as fstatCallback,
  fstatSync,
  fsync as fsyncCallback,
  fsyncSync,
  ftruncate as ftruncateCallback,
  ftruncateSync,
  link as linkCallback,
  linkSync,
  lstat as lstatCallback,
  lstatSync,
  mkdir as mkdirCallback,
  mkdirSync,
  open as openCallback,
  opendir as opendirCallback,
  openSync,
  type PathLike,
  read as readCallback,
  readdir as readdirCallback,
  readlink as readlinkCallback,
  readlinkSync,
  readSync,
  realpath as realpathCallback,
  realpathSync,
  rename as renameCallback,
  renameSync,
  rmdir as rmdirCallback,
  rmdirSync,
  stat as statCallback,
  statfs as statfsCallback,
  statfsSync,
  statSync,
  symlink as symlinkCallback,
  symlinkSync,
  unlink as unlinkCallback,
  unlinkSync,
  write as writeCallback,
  writeSync,
} from 'node:fs';
import type * as util from 'node:util';

/**
 * The promise-returning file-system calls the helper uses, made from node:fs callbacks. Not
 * node:fs/promises: loading it pulls in readline and the fs watchers (nine more built-in modules,
 * about 1.5 ms on every helper start, see bench/helper-startup.mjs), none of which the helper uses.
 * Not node:util's promisify either: under Bun, loading node:util alone costs ~2 ms per start.
 */

/** util.promisify for these calls (its typing; the value would load node:util). */
const promisify = ((call: (...args: unknown[]) => void) =>
  (...args: unknown[]) =>
    new Promise((resolve, reject) => {
      call(...args, (error: unknown, result: unknown) => (error ? reject(error) : resolve(result)));
    })) as typeof util.promisify;

/**
 * The helper program serves one request per process and has nothing else to do meanwhile, so it
 * switches these calls to the synchronous syscalls (main.ts calls useSynchronousCalls()): each
 * asynchronous call is a thread-pool round trip (and the pool's threads are created on first use),
 * which is most of a warm helper's time between request and reply (bench/run.mjs). The library
 * keeps them asynchronous: in the broker they share one event loop with other requests.
 */
let synchronous = false;

export function useSynchronousCalls(): void {
  synchronous = true;
}

/**
 * The asynchronous call (made on first use: twenty promisify() calls cost ~0.6 ms at start-up, in a
 * program that never uses them), or in synchronous mode `syncCall` with the same arguments (errors
 * become rejections).
 */
function dual<F extends (...args: never[]) => Promise<unknown>>(
  makeAsync: () => F,
  syncCall: (...args: Parameters<F>) => unknown,
): F {
  let asyncCall: F | null = null;
  return ((...args: Parameters<F>) => {
    if (!synchronous) {
      asyncCall ??= makeAsync();
      return asyncCall(...args);
    }
    try {
      return Promise.resolve(syncCall(...args));
    } catch (error) {
      return Promise.reject(error);
    }
  }) as F;
}

export const lstat = dual(() => promisify(lstatCallback), lstatSync);
export const stat = dual(() => promisify(statCallback), statSync);
export const mkdir = dual(() => promisify(mkdirCallback), mkdirSync);
export const rmdir = dual(() => promisify(rmdirCallback), rmdirSync);
export const unlink = dual(() => promisify(unlinkCallback), unlinkSync);
export const rename = dual(() => promisify(renameCallback), renameSync);
export const link = dual(() => promisify(linkCallback), linkSync);
export const symlink = dual(
  () => promisify(symlinkCallback),
  (target, path, type) => symlinkSync(target, path, type as symlinkCallback.Type | null | undefined),
);
export const readlink = dual(() => promisify(readlinkCallback), readlinkSync);
export const statfs = dual(() => promisify(statfsCallback), statfsSync);

/** Directory entries with names as raw bytes. In the bundle `opendir` is looked up on use: touching it loads the Dir machinery. */
export function opendirBytes(path: PathLike, bufferSize: number): Promise<Dir> {
  return new Promise((resolve, reject) => {
    opendirCallback(path, { encoding: 'buffer' as BufferEncoding, bufferSize }, (error, dir) =>
      error ? reject(error) : resolve(dir),
    );
  });
}

/** The names in a directory, as raw bytes, in one readdir(3) pass. */
export function readdirBytes(path: PathLike): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    readdirCallback(path, { encoding: 'buffer' }, (error, names) => (error ? reject(error) : resolve(names)));
  });
}

/** realpath(3) itself (what fs/promises.realpath uses), not node's JavaScript re-implementation. */
export const realpathBytes = dual(
  () =>
    (path: PathLike): Promise<Buffer> =>
      new Promise((resolve, reject) => {
        realpathCallback.native(path, { encoding: 'buffer' }, (error, resolved) =>
          error ? reject(error) : resolve(resolved),
        );
      }),
  (path) => realpathSync.native(path, { encoding: 'buffer' }),
);

const read = dual(
  () =>
    (fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> =>
      new Promise((resolve, reject) => {
        readCallback(fd, buffer, offset, length, position, (error, bytesRead) =>
          error ? reject(error) : resolve(bytesRead),
        );
      }),
  readSync,
);
const write = dual(
  () =>
    (
      fd: number,
      data: Uint8Array,
      offset: number,
      length: number,
      position: number | null,
    ): Promise<number> =>
      new Promise((resolve, reject) => {
        writeCallback(fd, data, offset, length, position, (error, bytesWritten) =>
          error ? reject(error) : resolve(bytesWritten),
        );
      }),
  writeSync,
);
const ftruncate = dual(() => promisify(ftruncateCallback), ftruncateSync);
const fstat = dual(() => promisify(fstatCallback), fstatSync);
const fchmod = dual(() => promisify(fchmodCallback), fchmodSync);
const fchown = dual(() => promisify(fchownCallback), fchownSync);
const fsync = dual(() => promisify(fsyncCallback), fsyncSync);
const close = dual(() => promisify(closeCallback), closeSync);
const openFd = dual(() => promisify(openCallback), openSync);

/** An open file descriptor with the few operations the helper performs on one. Close it explicitly. */
export class FileHandle {
  constructor(readonly fd: number) {}

  /** One positional read (pread): fewer bytes than asked means end of file or a short read. */
  async read(
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }> {
    return { bytesRead: await read(this.fd, buffer, offset, length, position) };
  }

  /** Writes all of `data` at the current position (a write may be partial; this loops until done). */
  async writeAll(data: Uint8Array): Promise<void> {
    for (let offset = 0; offset < data.length; ) {
      offset += await write(this.fd, data, offset, data.length - offset, null);
    }
  }

  /** Writes all of `data` at byte `position` (pwrite), leaving the current position alone. */
  async writeAllAt(data: Uint8Array, position: number): Promise<void> {
    for (let offset = 0; offset < data.length; ) {
      offset += await write(this.fd, data, offset, data.length - offset, position + offset);
    }
  }

  /** Sets the length; growing it leaves a hole, which takes no disk space. */
  truncate(length: number): Promise<void> {
    return ftruncate(this.fd, length);
  }

  stat(): Promise<BigIntStats> {
    return fstat(this.fd, { bigint: true });
  }

  chmod(mode: number): Promise<void> {
    return fchmod(this.fd, mode);
  }

  chown(uid: number, gid: number): Promise<void> {
    return fchown(this.fd, uid, gid);
  }

  sync(): Promise<void> {
    return fsync(this.fd);
  }

  close(): Promise<void> {
    return close(this.fd);
  }
}

export async function open(path: PathLike, flags: number, mode?: number): Promise<FileHandle> {
  return new FileHandle(await openFd(path, flags, mode));
}
