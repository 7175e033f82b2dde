import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import {
  currentHostOs,
  type ExecutableSurfacePolicy,
  FsError,
  type HostOs,
  LIMITS,
  lazySchema,
  nativeToPathUri,
  parseDenyGlob,
  parseNetworkEntry,
  SURFACE_EXTENSION_MAX_ENTRIES,
  surfaceEntryProblem,
} from '@fs-sandbox/policy';
import { type AST, getStaticTOMLValue, ParseError, parseTOML } from 'toml-eslint-parser';
import { z } from 'zod';

/**
 * A policy file (`fs-sandbox.toml`): named profiles that say what the profile flags say, so that a
 * project's sandbox is written once instead of on every command line. The file is one more source
 * for the flags (context-options.ts builds the one context from both), never a second policy
 * model. TOML, as Codex's `config.toml`; parsed by toml-eslint-parser because it keeps where every
 * key was written, which is what an error and `why` name.
 */
export const POLICY_FILE_NAME = 'fs-sandbox.toml';

/** The built-in profiles of `--profile`; a file's profile may not take their names (`--profile` stays unambiguous). */
export const BUILT_IN_PROFILES = ['read-only', 'workspace-write'] as const;
export type BuiltInProfile = (typeof BUILT_IN_PROFILES)[number];

export function isBuiltInProfile(name: string): name is BuiltInProfile {
  return (BUILT_IN_PROFILES as readonly string[]).includes(name);
}

/** A `--deny` value (or a `deny` entry) with one of these characters is a glob pattern, as in the policy's glob entries. */
export const GLOB_CHARACTERS = /[*?[{]/;

/** Bounds: a policy is a page of settings, not data; the reading and the search stay cheap. */
export const POLICY_FILE_MAX_BYTES = 256 * 1024;
const MAX_PROFILES = 64;
const MAX_ROOTS = LIMITS.policyMaxEntries;

/** Where a value of a policy file was written, for its errors and for `why`. */
export interface PolicySource {
  file: string;
  /** 1-based. */
  line: number;
  /** The key's path in the file, as TOML writes it (`profiles.dev.deny[1]`). */
  key: string;
}

/** A value of a profile with the place it was written. */
export interface Located<T> {
  value: T;
  source: PolicySource;
}

/**
 * One profile of a file, its paths made absolute against the file's directory (a project's policy
 * says the same thing whichever directory a command starts in).
 */
export interface PolicyProfile {
  file: string;
  name: string;
  sandboxMode: BuiltInProfile | undefined;
  writableRoots: Located<string>[];
  readRoots: Located<string>[];
  /** Absolute native paths, or absolute globs. */
  deny: Located<string>[];
  /**
   * As the network flags say it: `network = true`, or the domains' allowlist, and the host unix
   * sockets relayed to commands (absolute native paths); undefined for none of them.
   */
  network:
    | {
        network: boolean;
        allowDomain: string[];
        denyDomain: string[];
        allowUnixSocket: string[];
        source: PolicySource;
      }
    | undefined;
  protect: string[];
  /** Absolute native directories. */
  allowNestedRepositories: string[];
}

const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

// The schemas are built on first use (lazySchema): most commands read no policy file.
const nonEmptyPath = lazySchema(() =>
  z
    .string()
    .min(1, 'a path must not be empty')
    .refine((path) => !path.includes('\0'), 'a path must not contain NUL'),
);

const networkEntries = lazySchema(() =>
  z
    .array(
      z.string().superRefine((text, ctx) => {
        const entry = parseNetworkEntry(text);
        if (typeof entry === 'string') ctx.addIssue({ code: 'custom', message: `\`${text}\`: ${entry}` });
      }),
    )
    .max(LIMITS.networkMaxEntries),
);

/** Strict everywhere: a misspelled key would otherwise drop what it says (a deny, a protected name). */
const profileSchema = lazySchema(() =>
  z
    .strictObject({
      sandbox_mode: z.enum(BUILT_IN_PROFILES).optional(),
      writable_roots: z.array(nonEmptyPath()).max(MAX_ROOTS).optional(),
      read_roots: z.array(nonEmptyPath()).max(MAX_ROOTS).optional(),
      deny: z.array(nonEmptyPath()).max(MAX_ROOTS).optional(),
      network: z.boolean().optional(),
      allow_domains: networkEntries().optional(),
      deny_domains: networkEntries().optional(),
      unix_sockets: z
        .array(nonEmptyPath())
        .max(LIMITS.unixSocketMaxEntries, `at most ${LIMITS.unixSocketMaxEntries} unix sockets`)
        .optional(),
      protect: z
        .array(
          z.string().superRefine((path, ctx) => {
            const problem = surfaceEntryProblem(path);
            if (problem !== null) ctx.addIssue({ code: 'custom', message: `\`${path}\` ${problem}` });
          }),
        )
        .max(SURFACE_EXTENSION_MAX_ENTRIES)
        .optional(),
      allow_nested_repositories: z.array(nonEmptyPath()).max(SURFACE_EXTENSION_MAX_ENTRIES).optional(),
    })
    // The same combinations the flags refuse, refused here at the key that makes them.
    .superRefine((profile, ctx) => {
      if (profile.sandbox_mode === 'read-only' && (profile.writable_roots?.length ?? 0) > 0)
        ctx.addIssue({
          code: 'custom',
          path: ['writable_roots'],
          message: 'a read-only profile writes nothing: remove writable_roots or the sandbox_mode',
        });
      const domains = profile.allow_domains !== undefined || profile.deny_domains !== undefined;
      if (profile.network === true && domains)
        ctx.addIssue({
          code: 'custom',
          path: ['network'],
          message:
            'network = true gives the whole network; allow_domains and deny_domains narrow none to some hosts: use one or the other',
        });
      if (profile.network === true && (profile.unix_sockets?.length ?? 0) > 0)
        ctx.addIssue({
          code: 'custom',
          path: ['unix_sockets'],
          message:
            "unix_sockets are relayed into the command's own network, and network = true gives it the host's: use allow_domains for its network instead",
        });
      if (profile.deny_domains !== undefined && profile.allow_domains === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['deny_domains'],
          message:
            "deny_domains narrows what allow_domains allows; add allow_domains = ['*'] for every other host",
        });
    }),
);

const fileSchema = lazySchema(() =>
  z.strictObject({
    default_profile: z.string().optional(),
    profiles: z.record(z.string(), profileSchema()).superRefine((profiles, ctx) => {
      const names = Object.keys(profiles);
      if (names.length > MAX_PROFILES)
        ctx.addIssue({ code: 'custom', message: `at most ${MAX_PROFILES} profiles` });
      for (const name of names) {
        // Checked here rather than as the record's key schema, so the issue carries this message.
        const problem = !PROFILE_NAME.test(name)
          ? 'a profile name is 1 to 64 letters, digits, _ . - (starting with a letter or digit)'
          : isBuiltInProfile(name)
            ? `a profile may not be named ${BUILT_IN_PROFILES.join(' or ')}: --profile means the built-in one`
            : null;
        if (problem !== null) ctx.addIssue({ code: 'custom', path: [name], message: problem });
      }
    }),
  }),
);

type PolicyFileData = z.output<ReturnType<typeof fileSchema>>;
type KeyPath = readonly (string | number)[];

/** A parsed policy file: its profiles, and where each of its keys was written. */
export class PolicyFile {
  private constructor(
    readonly file: string,
    private readonly data: PolicyFileData,
    private readonly lines: Map<string, number>,
  ) {}

  /**
   * Reads and checks `file` (an absolute path); every problem is an `invalid_params` naming file,
   * line and key. `found`: the file was found by `--find-policy`, not named, so it must belong to
   * this user or root (as git trusts a repository it finds above the cwd): a shared directory
   * above the cwd, `/tmp` say, is one where anyone can leave one.
   */
  static load(file: string, found = false): PolicyFile {
    const text = readPolicyText(file, found ? trustedOwners() : null);
    let ast: AST.TOMLProgram;
    try {
      ast = parseTOML(text);
    } catch (error) {
      if (!(error instanceof ParseError)) throw error;
      throw policyError(file, { line: error.lineNumber, key: null }, error.message);
    }
    const lines = keyLines(ast);
    const parsed = fileSchema().safeParse(getStaticTOMLValue(ast));
    if (!parsed.success) {
      // An unknown key first: a misspelled key also makes the one it meant missing.
      const issues = parsed.error.issues;
      const issue = (issues.find((candidate) => candidate.code === 'unrecognized_keys') ??
        issues[0]) as z.core.$ZodIssue;
      // An unknown key is reported at itself (the typo's own line), not at the table holding it.
      const unknown = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
      const path = unknown === undefined ? issue.path : [...issue.path, unknown];
      const message =
        unknown === undefined
          ? issue.message
          : `unknown key (${knownKeysAt(issue.path).join(', ')} are known)`;
      throw policyError(file, locate(lines, path as KeyPath), message);
    }
    const policy = new PolicyFile(file, parsed.data, lines);
    if (parsed.data.default_profile !== undefined)
      policy.profile(parsed.data.default_profile, ['default_profile']);
    return policy;
  }

  /** The profile `--profile` names, or the file's `default_profile`. */
  select(name: string | undefined): PolicyProfile {
    if (name !== undefined) return this.profile(name, null);
    if (this.data.default_profile === undefined)
      throw new FsError(
        'invalid_params',
        `${this.file} has no default_profile: name one of its profiles with --profile (${this.names()})`,
        { policyFile: this.file },
      );
    return this.profile(this.data.default_profile, ['default_profile']);
  }

  private names(): string {
    return Object.keys(this.data.profiles ?? {}).join(', ') || 'it has none';
  }

  private profile(name: string, namedAt: KeyPath | null): PolicyProfile {
    const profile =
      this.data.profiles !== undefined && Object.hasOwn(this.data.profiles, name)
        ? this.data.profiles[name]
        : undefined;
    if (profile === undefined) {
      const message = `no profile ${JSON.stringify(name)} (the file has: ${this.names()})`;
      if (namedAt === null)
        throw new FsError('invalid_params', `${this.file}: ${message}`, { policyFile: this.file });
      throw policyError(this.file, locate(this.lines, namedAt), message);
    }
    const directory = dirname(this.file);
    const at = (key: string, index?: number): PolicySource => {
      const path = ['profiles', name, key, ...(index === undefined ? [] : [index])];
      return { file: this.file, line: locate(this.lines, path).line, key: keyText(path) };
    };
    const located = (key: 'writable_roots' | 'read_roots' | 'deny', map: (value: string) => string) =>
      (profile[key] ?? []).map((value, index) => ({ value: map(value), source: at(key, index) }));
    const deny = located('deny', (value) => absoluteDeny(directory, value));
    const domains = profile.allow_domains !== undefined;
    const sockets = (profile.unix_sockets ?? []).map((path) => resolve(directory, path));
    // A glob is checked here, where its line is known, not first when the sandbox is built.
    for (const { value, source } of deny)
      if (GLOB_CHARACTERS.test(value)) {
        try {
          parseDenyGlob(value, currentHostOs());
        } catch (error) {
          if (!(error instanceof FsError)) throw error;
          throw policyError(this.file, source, error.message);
        }
      }
    return {
      file: this.file,
      name,
      sandboxMode: profile.sandbox_mode,
      writableRoots: located('writable_roots', (path) => resolve(directory, path)),
      readRoots: located('read_roots', (path) => resolve(directory, path)),
      deny,
      network:
        profile.network === true || domains || sockets.length > 0
          ? {
              network: profile.network === true,
              allowDomain: profile.allow_domains ?? [],
              denyDomain: profile.deny_domains ?? [],
              allowUnixSocket: sockets,
              source: at(domains ? 'allow_domains' : profile.network === true ? 'network' : 'unix_sockets'),
            }
          : undefined,
      protect: profile.protect ?? [],
      allowNestedRepositories: (profile.allow_nested_repositories ?? []).map((path) =>
        resolve(directory, path),
      ),
    };
  }
}

/** The profile's additions to the protected surface, as a context carries them (undefined for none). */
export function surfacePolicy(profile: PolicyProfile, os: HostOs): ExecutableSurfacePolicy | undefined {
  if (profile.protect.length === 0 && profile.allowNestedRepositories.length === 0) return undefined;
  return {
    protect: profile.protect,
    allowNestedRepositories: profile.allowNestedRepositories.map((path) => nativeToPathUri(path, os)),
  };
}

/**
 * `--find-policy`: the nearest `fs-sandbox.toml` in `start` or a directory above it, or null. Only
 * on request: a file found by walking up may have been put there by someone other than the user
 * (which is also why the name is on the executable surface: no sandboxed write makes one, and why
 * `PolicyFile.load` takes a found one only from the user or root).
 */
export function findPolicyFile(start: string): string | null {
  for (let directory = resolve(start); ; directory = dirname(directory)) {
    const candidate = join(directory, POLICY_FILE_NAME);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Absent or unreadable here: keep looking above.
    }
    if (dirname(directory) === directory) return null;
  }
}

/**
 * Whose found policy file is taken: this user's and root's, and under `sudo` also the invoking
 * user's (`SUDO_UID`, as git does), so `sudo fs-sandbox … --find-policy` works in one's own project.
 * Null where there are no uids (Windows).
 */
function trustedOwners(): number[] | null {
  const euid = process.geteuid?.();
  if (euid === undefined) return null;
  const sudoUid = process.env.SUDO_UID;
  const invoker = euid === 0 && sudoUid !== undefined && /^\d+$/.test(sudoUid) ? [Number(sudoUid)] : [];
  return [euid, 0, ...invoker];
}

/**
 * The file's text, read through one descriptor (what is checked is what is read; a FIFO put there
 * does not block the open). `owners`: the uids a file found by walking up may belong to.
 */
function readPolicyText(file: string, owners: readonly number[] | null): string {
  const refuse = (message: string, extra: Record<string, unknown> = {}) =>
    new FsError('invalid_params', message, { policyFile: file, ...extra });
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw refuse(`policy file ${file} cannot be read: ${(error as Error).message}`);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw refuse(`policy file ${file} is not a file`);
    if (owners !== null) {
      // A link someone else planted, to a file of ours, would still be theirs to point elsewhere.
      const link = lstatSync(file, { throwIfNoEntry: false });
      const owner = [stats.uid, link?.uid ?? stats.uid].find((uid) => !owners.includes(uid));
      if (owner !== undefined)
        throw refuse(
          `--find-policy: ${file} belongs to uid ${owner}, not to you (uid ${owners[0]}) or root: whoever wrote it would choose your sandbox; name it with --policy FILE if you trust it`,
          { owner },
        );
    }
    // Bounded by what is read, not by the size stat gave: the file may grow meanwhile.
    const buffer = Buffer.alloc(POLICY_FILE_MAX_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > POLICY_FILE_MAX_BYTES)
      throw refuse(`policy file ${file} is larger than ${POLICY_FILE_MAX_BYTES} bytes`);
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

/** A relative deny path is under the file's directory; a relative glob too (its directory escaped). */
function absoluteDeny(directory: string, value: string): string {
  if (isAbsolute(value)) return value;
  if (!GLOB_CHARACTERS.test(value)) return resolve(directory, value);
  const literal = process.platform === 'win32' ? directory : directory.replace(/[*?[\]{}\\]/g, '\\$&');
  return `${literal.replace(/[\\/]$/, '')}/${value}`;
}

function knownKeysAt(path: readonly PropertyKey[]): string[] {
  const shape = path.length === 0 ? fileSchema().shape : profileSchema().shape;
  return Object.keys(shape);
}

/** `FILE:LINE: KEY: message`, the one form of every problem a policy file has. */
export function policyError(
  file: string,
  where: { line: number; key: string | null },
  message: string,
): FsError {
  const key = where.key === null ? '' : ` ${where.key}:`;
  return new FsError('invalid_params', `${file}:${where.line}:${key} ${message}`, {
    policyFile: file,
    line: where.line,
    ...(where.key === null ? {} : { key: where.key }),
  });
}

/** `profiles.dev.deny[1]`; a key that is not a bare name is quoted as TOML quotes it. */
function keyText(path: KeyPath): string {
  return path
    .map((part, index) => {
      if (typeof part === 'number') return `[${part}]`;
      const name = /^[A-Za-z0-9_-]+$/.test(part) ? part : JSON.stringify(part);
      return index === 0 ? name : `.${name}`;
    })
    .join('');
}

/** The line of the nearest key written at `path` or above it (a key inside an inline table is its own). */
function locate(lines: Map<string, number>, path: KeyPath): { line: number; key: string } {
  for (let length = path.length; length > 0; length--) {
    const line = lines.get(lineKey(path.slice(0, length)));
    if (line !== undefined) return { line, key: keyText(path) };
  }
  return { line: 1, key: keyText(path) };
}

function lineKey(path: KeyPath): string {
  return JSON.stringify(path);
}

/** Every key path of the document with the line it is written on (the first place, for a table's parents). */
function keyLines(ast: AST.TOMLProgram): Map<string, number> {
  const lines = new Map<string, number>();
  const record = (path: KeyPath, line: number) => {
    for (let length = 1; length <= path.length; length++) {
      const key = lineKey(path.slice(0, length));
      if (length === path.length || !lines.has(key)) lines.set(key, line);
    }
  };
  const value = (path: KeyPath, node: AST.TOMLContentNode) => {
    if (node.type === 'TOMLArray')
      node.elements.forEach((element, index) => {
        record([...path, index], element.loc.start.line);
        value([...path, index], element);
      });
    else if (node.type === 'TOMLInlineTable') for (const pair of node.body) keyValue(path, pair);
  };
  const keyValue = (base: KeyPath, pair: AST.TOMLKeyValue) => {
    const path = [...base, ...pair.key.keys.map((key) => (key.type === 'TOMLBare' ? key.name : key.value))];
    record(path, pair.loc.start.line);
    value(path, pair.value);
  };
  for (const item of ast.body[0].body) {
    if (item.type === 'TOMLKeyValue') keyValue([], item);
    else {
      record(item.resolvedKey, item.loc.start.line);
      for (const pair of item.body) keyValue(item.resolvedKey, pair);
    }
  }
  return lines;
}
