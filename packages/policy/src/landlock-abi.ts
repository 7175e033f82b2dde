/**
 * Landlock's access rights and scopes (linux/landlock.h), shared by the broker, which decides what
 * each path gets, and the launcher, which asks the kernel for it. The kernel never renumbers them.
 */

/** LANDLOCK_ACCESS_FS_* by name. */
export const LANDLOCK_FS = {
  execute: 1 << 0,
  writeFile: 1 << 1,
  readFile: 1 << 2,
  readDir: 1 << 3,
  removeDir: 1 << 4,
  removeFile: 1 << 5,
  makeChar: 1 << 6,
  makeDir: 1 << 7,
  makeReg: 1 << 8,
  makeSock: 1 << 9,
  makeFifo: 1 << 10,
  makeBlock: 1 << 11,
  makeSym: 1 << 12,
  /** ABI 2: link or rename a file into another directory. */
  refer: 1 << 13,
  /** ABI 3: truncate(2), ftruncate(2), O_TRUNC. */
  truncate: 1 << 14,
  /** ABI 5: ioctl(2) on a device file. */
  ioctlDev: 1 << 15,
} as const;

/** Every file-system right the kernel knows at ABI 5 and later (all are handled, so all are denied unless a rule grants them). */
export const LANDLOCK_FS_ALL = (1 << 16) - 1;

/** The rights that apply to a file (not a directory): a rule on a file may carry only these. */
export const LANDLOCK_FS_FILE =
  LANDLOCK_FS.execute |
  LANDLOCK_FS.writeFile |
  LANDLOCK_FS.readFile |
  LANDLOCK_FS.truncate |
  LANDLOCK_FS.ioctlDev;

/** What a readable root grants: read, list and execute (the runtime roots hold the programs). */
export const LANDLOCK_READ = LANDLOCK_FS.execute | LANDLOCK_FS.readFile | LANDLOCK_FS.readDir;

/**
 * What a writable root grants: everything but device nodes and sockets (mknod of a device needs a
 * capability the sandbox lacks, and no AF_UNIX socket can be made, so none can be bound there).
 */
export const LANDLOCK_WRITE =
  LANDLOCK_FS_ALL &
  ~(LANDLOCK_FS.makeChar | LANDLOCK_FS.makeBlock | LANDLOCK_FS.makeSock | LANDLOCK_FS.ioctlDev);

/** LANDLOCK_ACCESS_NET_* (ABI 4): with both handled and no port rule, no TCP bind or connect. */
export const LANDLOCK_NET_ALL = (1 << 0) | (1 << 1);

/** LANDLOCK_SCOPE_* (ABI 6): abstract unix sockets and signals only within the sandbox's own domain. */
export const LANDLOCK_SCOPE_ALL = (1 << 0) | (1 << 1);

/**
 * The lowest ABI the backend runs on: 6 is the first with signal scoping, without which a process
 * could signal every host process of its uid (there is no pid namespace); it also has TRUNCATE
 * (3), TCP rules (4) and device ioctls (5).
 */
export const LANDLOCK_MIN_ABI = 6;
