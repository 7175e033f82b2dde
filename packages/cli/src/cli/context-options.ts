import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  currentHostOs,
  entryLabel,
  type FileSystemEntry,
  FsError,
  type HostOs,
  isAbsoluteNative,
  nativeToPathUri,
  parseSandboxContext,
  pathUriToNative,
  type SandboxContextInput,
  workspaceWriteProfile,
} from '@fs-sandbox/policy';
import type { Command } from 'commander';
import type { CliIo } from './cli-io.js';
import {
  BUILT_IN_PROFILES,
  findPolicyFile,
  GLOB_CHARACTERS,
  isBuiltInProfile,
  POLICY_FILE_NAME,
  PolicyFile,
  type PolicyProfile,
  type PolicySource,
  policyError,
  surfacePolicy,
} from './policy-file.js';

/** The human way to describe a sandbox context on the command line. */
export interface ContextFlags extends PolicyFlags {
  /** A built-in profile (read-only, workspace-write), or with a policy file one of its profiles. */
  profile?: string;
  cwd?: string;
  writableRoot: string[];
  readRoot?: string[];
  deny: string[];
  /** A full sandbox context as JSON (the wire form), or false for the shortcuts' `--no-sandbox`. */
  sandbox?: string | false;
}

/** How a command's context flags are read. */
export interface ContextDefaults {
  /**
   * With no context flag at all: workspace-write on the cwd (instead of null, no sandbox). The
   * shortcuts and `explain` run sandboxed by default; a server applies a policy only when given one.
   */
  sandboxByDefault?: boolean;
  /** Check that `--cwd`, `--writable-root` and `--read-root` name existing directories (on this host). */
  checkDirectories?: boolean;
}

/** Where the profiles of a policy file come from (`--policy FILE`, or `--find-policy`). */
export interface PolicyFlags {
  profile?: string;
  policy?: string;
  findPolicy?: boolean;
}

/** What each profile reads and writes, for the help of every command that takes the flags. */
export const PROFILE_HELP =
  'sandbox profile: a built-in one, or with --policy/--find-policy a profile of the policy file. workspace-write: writes the writable roots (default: the cwd), reads only the ' +
  "platform's minimal roots (what a program needs to start), the cwd, the writable roots and the " +
  '--read-roots. read-only: writes nothing and reads the WHOLE disk (but the root-only secrets such as /etc/shadow and host keys), or with --read-root only the ' +
  'minimal roots, the cwd and the read roots. (On Windows reads cannot be confined: both read the whole disk.)';

/** Commander's accumulator for a repeatable option. */
export const collect = (value: string, previous: string[]) => [...previous, value];

export { GLOB_CHARACTERS } from './policy-file.js';

/** `--policy` and `--find-policy`, which every command with `--profile` takes. */
export function addPolicyOptions(command: Command): Command {
  return command
    .hook('preAction', (_, action) => {
      // Without a policy file, only a built-in profile means anything: a usage error, as before.
      const { profile, policy, findPolicy } = action.opts<PolicyFlags>();
      if (profile !== undefined && !isBuiltInProfile(profile) && policy === undefined && findPolicy !== true)
        action.error(
          `error: --profile ${profile} is not a built-in profile (${BUILT_IN_PROFILES.join(', ')}): a policy file's profile needs --policy FILE or --find-policy`,
          { exitCode: 2, code: 'commander.invalidArgument' },
        );
    })
    .option(
      '--policy <file>',
      `take the profile from this policy file (${POLICY_FILE_NAME}; --profile NAME, else its default_profile); the flags add to it and win`,
    )
    .option(
      '--find-policy',
      `take the profile from the nearest ${POLICY_FILE_NAME} in the cwd or a directory above it (never looked for without this flag)`,
    );
}

export function addContextOptions(command: Command): Command {
  return addPolicyOptions(command.option('--profile <name>', PROFILE_HELP))
    .option(
      '--cwd <dir>',
      'sandbox cwd and workspace root; relative paths resolve against it (default: the current directory)',
    )
    .option(
      '--writable-root <dir>',
      'writable root (repeatable; implies workspace-write; default: the cwd)',
      collect,
      [],
    )
    .option(
      '--read-root <dir>',
      'allow reading this directory (repeatable); with read-only, reads are then confined as with workspace-write',
      collect,
      [],
    )
    .option(
      '--deny <path|glob>',
      'deny all access to this path, or to what a glob matches (a value with * ? [ { is a glob; relative ones are under the cwd) (repeatable)',
      collect,
      [],
    )
    .option(
      '--sandbox <json>',
      'a complete sandbox context in the wire format (instead of the flags above; --read-root adds reads to it)',
    );
}

/** How a command's network is asked for on the command line (`run`, `explain`). */
export interface NetworkFlags {
  /** `--network`: the host's whole network, as `network: enabled`. */
  network?: boolean;
  allowDomain: string[];
  denyDomain: string[];
  /** `--allow-unix-socket`: host sockets relayed to the command (`unix_sockets`); absent: none. */
  allowUnixSocket?: string[];
}

export function addNetworkOptions(command: Command): Command {
  return command
    .option('--network', "give the command the host's whole network (default: none)")
    .option(
      '--allow-domain <host[:port]>',
      "let the command reach this host (and port) through fs-sandbox's proxy, nothing else (repeatable; *.example.com for every name below example.com, * for any public host)",
      collect,
      [],
    )
    .option(
      '--deny-domain <host[:port]>',
      'never let the command reach this host, whatever --allow-domain says (repeatable)',
      collect,
      [],
    )
    .option(
      '--allow-unix-socket <path>',
      'let the command reach this host unix socket, and no other, through a relay on a 127.0.0.1 port of its own network (FS_SANDBOX_UNIX_SOCKETS gives path → address; the socket must lie outside the writable roots) (repeatable)',
      collect,
      [],
    );
}

/**
 * The context with the network the flags ask for: `--network` is `network: enabled`, the domain
 * flags are `network_domains` beside `network: restricted`. Refused where they would mean nothing
 * or contradict each other, before anything runs.
 */
export function withNetworkFlags(
  sandbox: SandboxContextInput | null,
  flags: NetworkFlags & Pick<ContextFlags, 'sandbox'>,
  os: HostOs = currentHostOs(),
): SandboxContextInput | null {
  const domains = flags.allowDomain.length > 0 || flags.denyDomain.length > 0;
  const sockets = flags.allowUnixSocket ?? [];
  if (!flags.network && !domains && sockets.length === 0) return sandbox;
  const named = flags.network
    ? '--network'
    : flags.allowDomain.length > 0
      ? '--allow-domain'
      : flags.denyDomain.length > 0
        ? '--deny-domain'
        : '--allow-unix-socket';
  if (flags.network && domains)
    throw new FsError(
      'invalid_params',
      '--network gives the whole network; --allow-domain and --deny-domain narrow none to some hosts: use one or the other',
    );
  if (flags.network && sockets.length > 0)
    throw new FsError(
      'invalid_params',
      "--allow-unix-socket relays sockets into the command's own network, and --network gives it the host's: use --allow-domain for its network instead",
    );
  if (flags.denyDomain.length > 0 && flags.allowDomain.length === 0)
    throw new FsError(
      'invalid_params',
      "--deny-domain narrows what --allow-domain allows; add --allow-domain '*' to allow every other public host",
    );
  if (typeof flags.sandbox === 'string')
    throw new FsError(
      'invalid_params',
      `${named} cannot be combined with --sandbox (write it in the context instead)`,
    );
  if (sandbox === null)
    throw new FsError(
      'invalid_params',
      `${named} needs a sandbox: without one the command has the whole network already`,
    );
  const permissions = sandbox.permissions;
  if (permissions.type !== 'managed')
    throw new FsError('invalid_params', `${named} needs managed permissions`);
  // The flags replace a policy file's network (flags win): its allowlist goes with it, and its
  // sockets with --network (a command with the host's network has no namespace to relay into).
  // --allow-unix-socket alone replaces only the file's sockets.
  const { network_domains: fileDomains, unix_sockets: fileSockets, ...others } = permissions;
  // Relative socket paths are the sandbox's cwd's, as the context's other paths are.
  const base = typeof sandbox.cwd === 'string' ? pathUriToNative(sandbox.cwd, os) : process.cwd();
  const socketPart =
    sockets.length > 0
      ? { unix_sockets: sockets.map((path) => nativeToPathUri(resolve(base, path), os)) }
      : flags.network || fileSockets == null
        ? {}
        : { unix_sockets: fileSockets };
  const networkPart = flags.network
    ? { network: 'enabled' as const }
    : domains
      ? {
          network: 'restricted' as const,
          network_domains: { allow: flags.allowDomain, deny: flags.denyDomain },
        }
      : { network: permissions.network, ...(fileDomains == null ? {} : { network_domains: fileDomains }) };
  const network = { ...others, ...networkPart, ...socketPart };
  // Parsed now for an early, flag-named error (an entry that is not a host); the broker parses again.
  const context = { ...sandbox, permissions: network };
  parseSandboxContext(context);
  return context;
}

/** The directory relative operands and flag paths resolve against: `--cwd`, else the process cwd. */
export function baseDirectory(flags: Pick<ContextFlags, 'cwd'>, io: CliIo): string {
  return flags.cwd === undefined ? io.cwd : resolve(io.cwd, flags.cwd);
}

/** A policy file's profile that a context was built from, and where each of its entries was written. */
export interface PolicyOrigin {
  profile: PolicyProfile;
  /** By the label of a context entry (`file:///w/.env:deny`, as `why` reports it). */
  sources: ReadonlyMap<string, PolicySource>;
}

/** The context the flags describe, and the policy file's profile in it (null without one). */
export interface FlagsContext {
  context: SandboxContextInput | null;
  policy: PolicyOrigin | null;
}

/**
 * The wire-form sandbox context the flags describe, or null when none was asked for (the
 * operation then runs without a sandbox, as with `"sandbox": null` on the wire). Native paths are
 * resolved against `--cwd` (itself against the caller's cwd) and turned into file URIs.
 */
export function contextFromFlags(
  flags: ContextFlags,
  io: CliIo,
  os: HostOs = currentHostOs(),
  defaults: ContextDefaults = {},
): SandboxContextInput | null {
  return resolveContext(flags, io, os, defaults).context;
}

/**
 * `contextFromFlags` with the policy file's part named. A policy file's profile is read as if its
 * values were flags written before the command line's own (its paths absolute against the file's
 * directory): the roots and denies of both apply, and where one value must win, the flags do
 * (`--network`, `--allow-domain` and `--deny-domain` replace the file's network).
 */
export function resolveContext(
  flags: ContextFlags,
  io: CliIo,
  os: HostOs = currentHostOs(),
  defaults: ContextDefaults = {},
): FlagsContext {
  const policy = policyProfileFrom(flags, io);
  if (policy === null) return { context: contextFromFlagsOnly(flags, io, os, defaults), policy: null };
  if (flags.sandbox !== undefined)
    throw new FsError(
      'invalid_params',
      `${flags.sandbox === false ? '--no-sandbox' : '--sandbox'} cannot be combined with a policy file`,
    );
  // The file's roots are checked as the flags' are, each refusal naming where the file wrote it.
  if (defaults.checkDirectories) {
    for (const { value, source } of [...policy.writableRoots, ...policy.readRoots]) {
      const problem = directoryProblem(value);
      if (problem !== null) throw policyError(source.file, source, `${value} ${problem}`);
    }
  }
  const merged: ContextFlags = {
    ...flags,
    profile: policy.sandboxMode ?? 'workspace-write',
    writableRoot: [...policy.writableRoots.map(({ value }) => value), ...flags.writableRoot],
    readRoot: [...policy.readRoots.map(({ value }) => value), ...(flags.readRoot ?? [])],
    deny: [...policy.deny.map(({ value }) => value), ...flags.deny],
  };
  if (merged.profile === 'read-only' && flags.writableRoot.length > 0)
    throw new FsError(
      'invalid_params',
      `--writable-root needs a workspace-write profile: ${policy.name} of ${policy.file} is read-only`,
    );
  let context = contextFromFlagsOnly(merged, io, os, defaults) as SandboxContextInput;
  if (policy.network !== undefined)
    context = withNetworkFlags(context, policy.network) as SandboxContextInput;
  const surface = surfacePolicy(policy, os);
  if (surface !== undefined) context = { ...context, executableSurface: surface };
  return { context, policy: { profile: policy, sources: entrySources(policy, os) } };
}

/** The policy file's profile the flags select, or null when they name no policy file. */
export function policyProfileFrom(
  flags: PolicyFlags & Pick<ContextFlags, 'cwd'>,
  io: CliIo,
): PolicyProfile | null {
  const builtIn = flags.profile === undefined || isBuiltInProfile(flags.profile);
  if (flags.policy === undefined && flags.findPolicy !== true) {
    if (!builtIn)
      throw new FsError(
        'invalid_params',
        `--profile ${flags.profile} is not a built-in profile (${BUILT_IN_PROFILES.join(', ')}): a policy file's profile needs --policy FILE or --find-policy`,
      );
    return null;
  }
  if (flags.policy !== undefined && flags.findPolicy === true)
    throw new FsError('invalid_params', '--policy and --find-policy name the same thing: use one');
  if (flags.profile !== undefined && builtIn)
    throw new FsError(
      'invalid_params',
      `--profile ${flags.profile} is a built-in profile; with a policy file --profile names one of the file's profiles (whose sandbox_mode may be ${flags.profile})`,
    );
  const start = baseDirectory(flags, io);
  const file = flags.policy !== undefined ? resolve(io.cwd, flags.policy) : findPolicyFile(start);
  if (file === null)
    throw new FsError(
      'invalid_params',
      `--find-policy: no ${POLICY_FILE_NAME} in ${start} or a directory above it`,
    );
  return PolicyFile.load(file, flags.policy === undefined).select(flags.profile);
}

/** Each entry the profile put in the context, by its label, with the place it was written. */
function entrySources(policy: PolicyProfile, os: HostOs): Map<string, PolicySource> {
  const sources = new Map<string, PolicySource>();
  const add = (entry: FileSystemEntry, source: PolicySource) => {
    const label = entryLabel(entry);
    if (!sources.has(label)) sources.set(label, source);
  };
  const pathEntry = (path: string, access: FileSystemEntry['access']): FileSystemEntry => ({
    path: { type: 'path', path: nativeToPathUri(path, os) },
    access,
  });
  for (const { value, source } of policy.writableRoots) add(pathEntry(value, 'write'), source);
  for (const { value, source } of policy.readRoots) add(pathEntry(value, 'read'), source);
  for (const { value, source } of policy.deny)
    add(
      GLOB_CHARACTERS.test(value)
        ? { path: { type: 'glob_pattern', pattern: value }, access: 'deny' }
        : pathEntry(value, 'deny'),
      source,
    );
  return sources;
}

function contextFromFlagsOnly(
  flags: ContextFlags,
  io: CliIo,
  os: HostOs,
  defaults: ContextDefaults,
): SandboxContextInput | null {
  const readRoots = flags.readRoot ?? [];
  const usesFlags =
    flags.profile !== undefined ||
    flags.cwd !== undefined ||
    flags.writableRoot.length > 0 ||
    readRoots.length > 0 ||
    flags.deny.length > 0;
  if (flags.sandbox === false) {
    // --cwd still says where relative paths are; the rest describe a sandbox.
    if (usesFlags && !(flags.cwd !== undefined && usesOnlyCwd(flags)))
      throw new FsError('invalid_params', '--no-sandbox cannot be combined with the profile flags');
    if (defaults.checkDirectories && flags.cwd !== undefined)
      checkDirectory('--cwd', absolute(flags.cwd, io.cwd, os));
    return null;
  }
  if (flags.sandbox !== undefined) {
    if (usesFlags && !(readRoots.length > 0 && usesOnlyReadRoots(flags)))
      throw new FsError(
        'invalid_params',
        '--sandbox cannot be combined with the profile flags (but --read-root, which adds reads to it)',
      );
    // Parsed here for an early, flag-named error; the broker parses what it is sent.
    const raw = parseJsonFlag(flags.sandbox);
    parseSandboxContext(raw);
    return withReadRoots(raw as SandboxContextInput | null, readRoots, io, os, defaults);
  }
  if (!usesFlags && !defaults.sandboxByDefault) return null;
  const profileName =
    flags.profile ??
    (flags.writableRoot.length > 0 || defaults.sandboxByDefault ? 'workspace-write' : undefined);
  if (profileName === undefined)
    throw new FsError('invalid_params', '--cwd, --read-root and --deny need --profile');
  if (profileName === 'read-only' && flags.writableRoot.length > 0) {
    throw new FsError('invalid_params', '--writable-root needs --profile workspace-write');
  }
  // Paths already absolute for the target OS are kept as written (explain for another platform).
  const base = flags.cwd === undefined ? io.cwd : absolute(flags.cwd, io.cwd, os);
  const native = (path: string) => absolute(path, base, os);
  if (defaults.checkDirectories) {
    checkDirectory('--cwd', base);
    for (const root of flags.writableRoot) checkDirectory('--writable-root', native(root));
    for (const root of readRoots) checkDirectory('--read-root', native(root));
  }
  const uri = (path: string) => nativeToPathUri(native(path), os);
  const cwd = nativeToPathUri(base, os);
  // Read-only is full-disk read with no writable root; the deny entries narrow either profile.
  const writableRoots =
    profileName === 'read-only' ? [] : flags.writableRoot.length > 0 ? flags.writableRoot.map(uri) : [cwd];
  const reads: FileSystemEntry[] = readRoots.map((root) => ({
    path: { type: 'path', path: uri(root) },
    access: 'read',
  }));
  const denies: FileSystemEntry[] = flags.deny
    .filter((value) => GLOB_CHARACTERS.test(value))
    .map((pattern) => ({ path: { type: 'glob_pattern', pattern }, access: 'deny' }));
  const profile = workspaceWriteProfile({
    writableRoots,
    deny: flags.deny.filter((value) => !GLOB_CHARACTERS.test(value)).map(uri),
  });
  let entries = [...profile.file_system.entries, ...reads, ...denies];
  // Reads are confined for workspace-write, and for read-only as soon as --read-root names what to
  // read (someone naming read roots means "only these"). Windows' restricted token confines writes
  // only: a narrowed read set there would be refused (sandbox_unavailable) rather than enforced, so
  // on Windows both keep reading the whole disk, and `explain` says so.
  const confineReads = profileName === 'workspace-write' || readRoots.length > 0;
  if (confineReads && os !== 'windows') {
    // Not the whole disk: the platform's minimal roots (what a program needs to start), the cwd
    // (read through its write entry or, with other writable roots, a read entry) and --read-root.
    const minimal: FileSystemEntry = {
      path: { type: 'special', value: { kind: 'minimal' } },
      access: 'read',
    };
    const cwdRead: FileSystemEntry[] = writableRoots.includes(cwd)
      ? []
      : [{ path: { type: 'path', path: cwd }, access: 'read' }];
    entries = [minimal, ...cwdRead, ...entries.filter((entry) => !isRootRead(entry))];
  }
  return {
    permissions: { ...profile, file_system: { ...profile.file_system, entries } },
    cwd,
    workspaceRoots: [cwd],
    windowsSandboxLevel: os === 'windows' ? 'restricted-token' : 'disabled',
  } satisfies SandboxContextInput;
}

function usesOnlyReadRoots(flags: ContextFlags): boolean {
  return (
    flags.profile === undefined &&
    flags.cwd === undefined &&
    flags.writableRoot.length === 0 &&
    flags.deny.length === 0
  );
}

/**
 * `--sandbox JSON --read-root DIR`: the context with a read entry for each root (resolved against
 * the caller's cwd, as every flag path). Only a restricted file system has entries to add to.
 */
function withReadRoots(
  context: SandboxContextInput | null,
  roots: readonly string[],
  io: CliIo,
  os: HostOs,
  defaults: ContextDefaults,
): SandboxContextInput | null {
  if (roots.length === 0) return context;
  if (context === null) throw new FsError('invalid_params', '--read-root needs a sandbox: --sandbox is null');
  // Already parsed: the raw form has the shape the schema checked.
  const fileSystem = context.permissions.type === 'managed' ? context.permissions.file_system : null;
  if (context.permissions.type !== 'managed' || fileSystem?.type !== 'restricted')
    throw new FsError(
      'invalid_params',
      '--read-root adds to a restricted file_system; this --sandbox has none',
    );
  const paths = roots.map((root) => absolute(root, io.cwd, os));
  if (defaults.checkDirectories) for (const path of paths) checkDirectory('--read-root', path);
  const reads: FileSystemEntry[] = paths.map((path) => ({
    path: { type: 'path', path: nativeToPathUri(path, os) },
    access: 'read',
  }));
  const entries = [...fileSystem.entries, ...reads];
  // Parsed again so that the policy's bound on its entries is an early, flag-named error too.
  const widened = {
    ...context,
    permissions: { ...context.permissions, file_system: { ...fileSystem, entries } },
  };
  parseSandboxContext(widened);
  return widened;
}

function usesOnlyCwd(flags: ContextFlags): boolean {
  return (
    flags.profile === undefined &&
    flags.writableRoot.length === 0 &&
    (flags.readRoot ?? []).length === 0 &&
    flags.deny.length === 0
  );
}

function absolute(path: string, base: string, os: HostOs): string {
  return isAbsoluteNative(os, path) ? path : resolve(base, path);
}

function isRootRead(entry: FileSystemEntry): boolean {
  return entry.path.type === 'special' && entry.path.value.kind === 'root' && entry.access === 'read';
}

function checkDirectory(flag: string, path: string): void {
  const problem = directoryProblem(path);
  if (problem !== null) throw new FsError('invalid_params', `${flag} ${path} ${problem}`);
}

function directoryProblem(path: string): string | null {
  try {
    return statSync(path).isDirectory() ? null : 'is not a directory';
  } catch {
    return 'does not exist';
  }
}

function parseJsonFlag(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new FsError('invalid_params', `--sandbox is not valid JSON: ${(error as Error).message}`);
  }
}
