import {
  accessSync,
  type BigIntStats,
  closeSync,
  constants,
  type Dirent,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
  statSync,
} from 'node:fs';
import { FsError, fsPathArg } from '@fs-sandbox/policy/core';
import { nodeCrypto } from './lazy-crypto.js';

/**
 * Every read of the host a sandbox launch is built from (Linux backend, host protections, path
 * guard) goes through here, and each one is remembered as a witness: what was asked and what the
 * host answered. Building a launch is a pure function of its context, the broker's runtime and
 * these answers, so when every witness, asked again, gets the same answer, the launch built then is
 * exactly the launch a rebuild would produce now (the rebuild would take the same branches and ask
 * the same questions). That is what lets SandboxRunner reuse a launch without trusting anything
 * textual: a re-pointed symlink, a new `.git` pointer, a denied file that appeared or was replaced,
 * a deny-glob directory that gained an entry, each changes some answer and forces a rebuild.
 *
 * An answer keeps only what the builders use, so nothing irrelevant (a file's size or times as it
 * is written) invalidates a launch: of a stat, the device, inode, mode (type and permissions) and
 * link count (of what is not a directory); a link's text; a real path; a directory's entry names and types; a pointer file's
 * bytes; whether a file is executable; an environment variable's value; an error's code.
 *
 * Recording is by a set of open journals, each receiving every read made while it is open. Builds
 * that interleave at their awaits then each get a superset of their own reads: a witness too many
 * only makes a reuse rarer, never wrong.
 */

/** The reads one launch was built from, to be asked again before the launch is reused. */
export class HostJournal {
  /** Each distinct question (`op`, NUL, path) once, with how to ask it again and its answer. */
  private readonly questions = new Map<string, { ask: () => string; answer: string }>();
  /** The host changed while the launch was being built: one question got two answers. */
  private inconsistent = false;
  private kept = 0;

  add(question: string, ask: () => string, answer: string): void {
    const digest = digestOf(answer);
    const known = this.questions.get(question);
    if (known === undefined) {
      this.questions.set(question, { ask, answer: digest });
      this.kept += question.length + digest.length;
    } else if (known.answer !== digest) {
      this.inconsistent = true;
    }
  }

  /** True when every read, made again now, gets the answer it got when the launch was built. */
  stillHolds(): boolean {
    if (this.inconsistent) return false;
    for (const { ask, answer } of this.questions.values()) if (digestOf(ask()) !== answer) return false;
    return true;
  }

  /** Distinct questions. */
  get size(): number {
    return this.questions.size;
  }

  /** Characters kept for them (questions and answers), what a cached launch costs in memory. */
  get bytes(): number {
    return this.kept;
  }
}

/** Longer answers than this (a directory's listing, a pointer file) are kept as their hash. */
const ANSWER_KEPT_WHOLE = 64;

function digestOf(answer: string): string {
  return answer.length <= ANSWER_KEPT_WHOLE
    ? answer
    : `#${nodeCrypto().createHash('sha256').update(answer, 'latin1').digest('base64')}`;
}

const open = new Set<HostJournal>();

/** Runs `build` with a new journal open; the journal gets every host read made until it settles. */
export async function journaled<T>(build: () => Promise<T>): Promise<{ value: T; reads: HostJournal }> {
  const journal = new HostJournal();
  open.add(journal);
  try {
    return { value: await build(), reads: journal };
  } finally {
    open.delete(journal);
  }
}

/**
 * One read for a builder: `read` gives the value (or throws, as node's call does), `answerOf` the
 * answer it is witnessed by, and `ask` the same question asked again later, never throwing (an
 * error is answered by its code, as errorAnswer does). Every open journal gets the question.
 */
function witnessed<T>(
  op: string,
  path: string,
  read: () => T,
  answerOf: (value: T) => string,
  ask: () => string,
): T {
  let value: T;
  try {
    value = read();
  } catch (error) {
    for (const journal of open) journal.add(`${op}\0${path}`, ask, errorAnswer(error));
    throw error;
  }
  if (open.size > 0) {
    const answer = answerOf(value);
    for (const journal of open) journal.add(`${op}\0${path}`, ask, answer);
  }
  return value;
}

/** `ask` for a read that answers like `answerOf`, or by its error's code. */
function asking<T>(read: () => T, answerOf: (value: T) => string): () => string {
  return () => {
    try {
      return answerOf(read());
    } catch (error) {
      return errorAnswer(error);
    }
  };
}

function errorAnswer(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return `!${typeof code === 'string' ? code : 'error'}`;
}

function statAnswer(stats: Stats | BigIntStats): string {
  // A file's link count tells the guard it has other names (a hard link to a denied file). A
  // directory's counts its subdirectories, which no builder reads: kept, it would void every launch
  // under /tmp whenever any program made or removed a directory there.
  const links = stats.isDirectory() ? '' : `:${stats.nlink}`;
  return `${stats.dev}:${stats.ino}:${stats.mode}${links}`;
}

export function lstat(path: string): Stats {
  return witnessed(
    'lstat',
    path,
    () => lstatSync(fsPathArg(path)),
    statAnswer,
    () => statOrMissing(() => lstatSync(fsPathArg(path), { throwIfNoEntry: false })),
  );
}

export function lstatBigint(path: string): BigIntStats {
  return witnessed(
    'lstatBigint',
    path,
    () => lstatSync(fsPathArg(path), { bigint: true }),
    statAnswer,
    () => statOrMissing(() => lstatSync(fsPathArg(path), { bigint: true, throwIfNoEntry: false })),
  );
}

export function stat(path: string): Stats {
  return witnessed(
    'stat',
    path,
    () => statSync(fsPathArg(path)),
    statAnswer,
    () => statOrMissing(() => statSync(fsPathArg(path), { throwIfNoEntry: false })),
  );
}

/**
 * Yarn's Plug'n'Play runtime (a Yarn 4 project's default) replaces node's fs functions with ones that
 * ignore the `buffer` encoding of readlinkSync and realpathSync.native and answer a string: the
 * bytes decoded as UTF-8. Given back as bytes, that is exact for a UTF-8 name; a name that is not
 * UTF-8 came back with U+FFFD in place of its bytes, and is refused rather than guessed at.
 */
function asBytes(answer: Buffer | string, path: string): Buffer {
  if (typeof answer !== 'string') return answer;
  if (answer.includes('\uFFFD')) {
    throw new FsError(
      'sandbox_unavailable',
      `${JSON.stringify(path)} leads to a name that is not UTF-8, which node's fs under Yarn Plug'n'Play cannot give as bytes (install with nodeLinker: node-modules)`,
    );
  }
  return Buffer.from(answer, 'utf8');
}

export function readlink(path: string): Buffer {
  const read = () => asBytes(readlinkSync(fsPathArg(path), 'buffer'), path);
  const answerOf = (text: Buffer) => text.toString('latin1');
  return witnessed('readlink', path, read, answerOf, asking(read, answerOf));
}

/** The real path (the kernel's resolution, not node's JavaScript one), as bytes. */
export function realpath(path: string): Buffer {
  const read = () => asBytes(realpathSync.native(fsPathArg(path), 'buffer'), path);
  const answerOf = (real: Buffer) => real.toString('latin1');
  return witnessed('realpath', path, read, answerOf, asking(read, answerOf));
}

export function readdirTyped(path: string): Dirent<Buffer>[] {
  const read = () => readdirSync(fsPathArg(path), { encoding: 'buffer', withFileTypes: true });
  const answerOf = (entries: Dirent<Buffer>[]) =>
    entries.map((entry) => `${direntType(entry)}${entry.name.toString('latin1')}`).join('\0');
  return witnessed('readdirTyped', path, read, answerOf, asking(read, answerOf));
}

/** The first `maxBytes` of a file (a `.git` pointer, a `commondir`). */
export function readHead(path: string, maxBytes: number): Buffer {
  const read = () => {
    // Non-blocking: a FIFO swapped in after the lstat must not hang the broker in open(2).
    const fd = openSync(fsPathArg(path), constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const buffer = Buffer.alloc(maxBytes);
      return buffer.subarray(0, readSync(fd, buffer, 0, maxBytes, 0));
    } finally {
      closeSync(fd);
    }
  };
  const answerOf = (bytes: Buffer) => `${maxBytes}:${bytes.toString('latin1')}`;
  return witnessed('readHead', path, read, answerOf, asking(read, answerOf));
}

/** Throws unless the file may be executed by the broker's user. */
export function assertExecutable(path: string): void {
  const read = () => accessSync(fsPathArg(path), constants.X_OK);
  const answerOf = () => 'ok';
  witnessed('executable', path, read, answerOf, asking(read, answerOf));
}

/**
 * A variable of the broker's environment: `process.env` is live, so a library caller may set
 * FS_SANDBOX_BWRAP between two requests, and the second must then find that bwrap.
 */
export function variable(env: Record<string, string | undefined>, name: string): string | undefined {
  const read = () => env[name];
  const answerOf = (value: string | undefined) => (value === undefined ? '!unset' : `=${value}`);
  return witnessed('env', name, read, answerOf, asking(read, answerOf));
}

/** A stat's answer where a missing path is no exception (throwing one costs more than the call). */
function statOrMissing(read: () => Stats | BigIntStats | undefined): string {
  try {
    const stats = read();
    return stats === undefined ? '!ENOENT' : statAnswer(stats);
  } catch (error) {
    return errorAnswer(error);
  }
}

function direntType(entry: Dirent<Buffer>): string {
  if (entry.isSymbolicLink()) return 'l';
  if (entry.isDirectory()) return 'd';
  return entry.isFile() ? 'f' : 'o';
}
