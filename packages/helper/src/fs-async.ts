import * as fs from 'node:fs';
import { promisify } from 'node:util';

/**
 * The promise-returning file-system calls the helper uses, made from node:fs callbacks. Not
 * node:fs/promises: loading it pulls in readline and the fs watchers (nine more built-in modules,
 * about 1.5 ms on every helper start, see bench/helper-startup.mjs), none of which the helper uses.
 */

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

/** `asyncCall`, or in synchronous mode `syncCall` with the same arguments (errors become rejections). */
function dual<F extends (...args: never[]) => Promise<unknown>>(
  asyncCall: F,
  syncCall: (...args: Parameters<F>) => unknown,
): F {
  return ((...args: Parameters<F>) => {
    if (!synchronous) return asyncCall(...args);
    try {
      return Promise.resolve(syncCall(...args));
    } catch (error) {
      return Promise.reject(error);
    }
  }) as F;
}

export const lstat = dual(promisify(fs.lstat), fs.lstatSync);
export const stat = dual(promisify(fs.stat), fs.statSync);
export const mkdir = dual(promisify(fs.mkdir), fs.mkdirSync);
export const rmdir = dual(promisify(fs.rmdir), fs.rmdirSync);
export const unlink = dual(promisify(fs.unlink), fs.unlinkSync);
export const rename = dual(promisify(fs.rename), fs.renameSync);
export const link = dual(promisify(fs.link), fs.linkSync);
export const symlink = dual(promisify(fs.symlink), (target, path, type) =>
  fs.symlinkSync(target, path, type as fs.symlink.Type | null | undefined),
);
export const readlink = dual(promisify(fs.readlink), fs.readlinkSync);
export const statfs = dual(promisify(fs.statfs), fs.statfsSync);

/** Directory entries with names as raw bytes. `fs.opendir` is looked up on use: touching it loads the Dir machinery. */
export function opendirBytes(path: fs.PathLike, bufferSize: number): Promise<fs.Dir> {
  return new Promise((resolve, reject) => {
    fs.opendir(path, { encoding: 'buffer' as BufferEncoding, bufferSize }, (error, dir) =>
      error ? reject(error) : resolve(dir),
    );
  });
}

/** realpath(3) itself (what fs/promises.realpath uses), not node's JavaScript re-implementation. */
export const realpathBytes = dual(
  (path: fs.PathLike): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      fs.realpath.native(path, { encoding: 'buffer' }, (error, resolved) =>
        error ? reject(error) : resolve(resolved),
      );
    }),
  (path) => fs.realpathSync.native(path, { encoding: 'buffer' }),
);

const read = dual(
  (fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> =>
    new Promise((resolve, reject) => {
      fs.read(fd, buffer, offset, length, position, (error, bytesRead) =>
        error ? reject(error) : resolve(bytesRead),
      );
    }),
  fs.readSync,
);
const write = dual(
  (fd: number, data: Uint8Array, offset: number, length: number): Promise<number> =>
    new Promise((resolve, reject) => {
      fs.write(fd, data, offset, length, null, (error, bytesWritten) =>
        error ? reject(error) : resolve(bytesWritten),
      );
    }),
  fs.writeSync,
);
const fstat = dual(promisify(fs.fstat), fs.fstatSync);
const fchmod = dual(promisify(fs.fchmod), fs.fchmodSync);
const fchown = dual(promisify(fs.fchown), fs.fchownSync);
const fsync = dual(promisify(fs.fsync), fs.fsyncSync);
const close = dual(promisify(fs.close), fs.closeSync);
const openFd = dual(promisify(fs.open), fs.openSync);

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
      offset += await write(this.fd, data, offset, data.length - offset);
    }
  }

  stat(): Promise<fs.BigIntStats> {
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

export async function open(path: fs.PathLike, flags: number, mode?: number): Promise<FileHandle> {
  return new FileHandle(await openFd(path, flags, mode));
}
