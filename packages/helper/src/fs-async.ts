import * as fs from 'node:fs';
import { promisify } from 'node:util';

/**
 * The promise-returning file-system calls the helper uses, made from node:fs callbacks. Not
 * node:fs/promises: loading it pulls in readline and the fs watchers (nine more built-in modules,
 * about 1.5 ms on every helper start, see bench/helper-startup.mjs), none of which the helper uses.
 */

export const lstat = promisify(fs.lstat);
export const stat = promisify(fs.stat);
export const mkdir = promisify(fs.mkdir);
export const rmdir = promisify(fs.rmdir);
export const unlink = promisify(fs.unlink);
export const rename = promisify(fs.rename);
export const link = promisify(fs.link);
export const symlink = promisify(fs.symlink);
export const readlink = promisify(fs.readlink);
export const statfs = promisify(fs.statfs);

/** Directory entries with names as raw bytes. `fs.opendir` is looked up on use: touching it loads the Dir machinery. */
export function opendirBytes(path: fs.PathLike, bufferSize: number): Promise<fs.Dir> {
  return new Promise((resolve, reject) => {
    fs.opendir(path, { encoding: 'buffer' as BufferEncoding, bufferSize }, (error, dir) =>
      error ? reject(error) : resolve(dir),
    );
  });
}

/** realpath(3) itself (what fs/promises.realpath uses), not node's JavaScript re-implementation. */
export function realpathBytes(path: fs.PathLike): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    fs.realpath.native(path, { encoding: 'buffer' }, (error, resolved) =>
      error ? reject(error) : resolve(resolved),
    );
  });
}

const read = promisify(fs.read);
const write = promisify(fs.write);
const fstat = promisify(fs.fstat);
const fchmod = promisify(fs.fchmod);
const fchown = promisify(fs.fchown);
const fsync = promisify(fs.fsync);
const close = promisify(fs.close);
const openFd = promisify(fs.open);

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
    return { bytesRead: (await read(this.fd, buffer, offset, length, position)).bytesRead };
  }

  /** Writes all of `data` at the current position (a write may be partial; this loops until done). */
  async writeAll(data: Uint8Array): Promise<void> {
    for (let offset = 0; offset < data.length; ) {
      offset += (await write(this.fd, data, offset, data.length - offset)).bytesWritten;
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
