import { resolve } from 'node:path';
import {
  currentHostOs,
  FsError,
  type HostOs,
  isAbsoluteNative,
  nativeToPathUri,
  parseSandboxContext,
  type SandboxContextInput,
  workspaceWriteProfile,
} from '@fs-sandbox/policy';
import { type Command, Option } from 'commander';
import type { CliIo } from './cli-io.js';

/** The human way to describe a sandbox context on the command line. */
export interface ContextFlags {
  profile?: 'read-only' | 'workspace-write';
  cwd?: string;
  writableRoot: string[];
  deny: string[];
  /** A full sandbox context as JSON (the wire form), instead of the flags above. */
  sandbox?: string;
}

/** Commander's accumulator for a repeatable option. */
export const collect = (value: string, previous: string[]) => [...previous, value];

export function addContextOptions(command: Command): Command {
  return command
    .addOption(new Option('--profile <name>', 'sandbox profile').choices(['read-only', 'workspace-write']))
    .option('--cwd <dir>', 'sandbox cwd and workspace root (default: the current directory)')
    .option(
      '--writable-root <dir>',
      'writable root (repeatable; implies workspace-write; default: the cwd)',
      collect,
      [],
    )
    .option('--deny <path>', 'deny all access to this path (repeatable)', collect, [])
    .option('--sandbox <json>', 'a complete sandbox context in the wire format (instead of the flags above)');
}

/**
 * The wire-form sandbox context the flags describe, or null when none was asked for (the
 * operation then runs without a sandbox, as with `"sandbox": null` on the wire). Native paths are
 * resolved against the caller's cwd and turned into file URIs.
 */
export function contextFromFlags(
  flags: ContextFlags,
  io: CliIo,
  os: HostOs = currentHostOs(),
): SandboxContextInput | null {
  const usesFlags =
    flags.profile !== undefined ||
    flags.cwd !== undefined ||
    flags.writableRoot.length > 0 ||
    flags.deny.length > 0;
  if (flags.sandbox !== undefined) {
    if (usesFlags) throw new FsError('invalid_params', '--sandbox cannot be combined with the profile flags');
    // Parsed here for an early, flag-named error; the broker parses what it is sent.
    const raw = parseJsonFlag(flags.sandbox);
    parseSandboxContext(raw);
    return raw as SandboxContextInput | null;
  }
  if (!usesFlags) return null;
  const profileName = flags.profile ?? (flags.writableRoot.length > 0 ? 'workspace-write' : undefined);
  if (profileName === undefined) throw new FsError('invalid_params', '--cwd and --deny need --profile');
  if (profileName === 'read-only' && flags.writableRoot.length > 0) {
    throw new FsError('invalid_params', '--writable-root needs --profile workspace-write');
  }
  // Paths already absolute for the target OS are kept as written (explain for another platform).
  const uri = (path: string) =>
    nativeToPathUri(isAbsoluteNative(os, path) ? path : resolve(io.cwd, path), os);
  const cwd = uri(flags.cwd ?? io.cwd);
  const deny = flags.deny.map(uri);
  // Read-only is full-disk read with no writable root; the deny entries narrow either profile.
  const writableRoots =
    profileName === 'read-only' ? [] : flags.writableRoot.length > 0 ? flags.writableRoot.map(uri) : [cwd];
  const permissions = workspaceWriteProfile({ writableRoots, deny });
  return {
    permissions,
    cwd,
    workspaceRoots: [cwd],
    windowsSandboxLevel: os === 'windows' ? 'restricted-token' : 'disabled',
  } satisfies SandboxContextInput;
}

function parseJsonFlag(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new FsError('invalid_params', `--sandbox is not valid JSON: ${(error as Error).message}`);
  }
}
