import { closeSync, openSync, readdirSync, readSync } from 'node:fs';

/**
 * The helper starts with nothing open but stdin, stdout and stderr. A descriptor survives exec,
 * bwrap and every namespace untouched, and the sandbox's mounts do not apply to it: one that the
 * broker's own parent left open without close-on-exec (on a file inside a denied directory, on a
 * directory outside every root) would let the helper read that file as /proc/self/fd/N, or write
 * below that directory as /proc/self/fd/N/name, past every mask. The broker cannot close what it
 * does not know about, so the helper closes them itself, before it does anything else.
 *
 * Node's own descriptors (epoll, eventfd, signal pipes, io_uring) must stay open, and telling them
 * apart needs no list: Node and libuv open every one of theirs with O_CLOEXEC, while a descriptor
 * that survived exec necessarily lacks it. So each N > 2 in /proc/self/fd whose `flags:` line in
 * /proc/self/fdinfo/N (octal) lacks O_CLOEXEC is inherited, and closed. Synchronous, since it runs
 * once before the first request and anything asynchronous would open more descriptors first.
 *
 * Linux only: macOS has no /proc/self/fdinfo, so a helper there keeps what it inherited. It would
 * need the close-on-exec bit of each open descriptor (fcntl(F_GETFD), which Node does not expose),
 * or a launcher that spawns it with POSIX_SPAWN_CLOEXEC_DEFAULT.
 */

const O_CLOEXEC = 0o2000000;
const FLAGS_LINE = /^flags:\s*([0-7]+)$/m;
const FDINFO_BUFFER = Buffer.alloc(128);

/** Closes every inherited descriptor above stderr. Throws when Linux procfs cannot tell which they are. */
export function closeInheritedDescriptors(): void {
  for (const fd of inheritedDescriptors()) closeSync(fd);
}

/**
 * The descriptors above stderr that the next exec would pass on (no close-on-exec): inherited ones,
 * or ones the program opened without O_CLOEXEC. Empty where Linux procfs cannot tell (other OSes).
 */
export function inheritedDescriptors(): number[] {
  if (process.platform !== 'linux') return [];
  const passedOn: number[] = [];
  for (const name of readdirSync('/proc/self/fd')) {
    const fd = Number(name);
    if (fd <= 2) continue;
    const flags = openFlags(fd);
    if (flags === null || (flags & O_CLOEXEC) !== 0) continue;
    passedOn.push(fd);
  }
  return passedOn;
}

/** The descriptor's open flags, or null when it is gone (the directory listing's own descriptor). */
function openFlags(fd: number): number | null {
  let info: number;
  try {
    info = openSync(`/proc/self/fdinfo/${fd}`, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let text: string;
  try {
    // `flags:` is the second line, well inside the first read (readFileSync would stat and loop).
    text = FDINFO_BUFFER.toString('latin1', 0, readSync(info, FDINFO_BUFFER, 0, FDINFO_BUFFER.length, 0));
  } finally {
    closeSync(info);
  }
  const flags = FLAGS_LINE.exec(text)?.[1];
  if (flags === undefined) throw new Error(`/proc/self/fdinfo/${fd} has no flags line`);
  return Number.parseInt(flags, 8);
}
