import { z } from 'zod';
import { LIMITS } from '../limits.js';
import { parseNetworkEntry } from '../network/network-entry.js';
import { SURFACE_EXTENSION_MAX_ENTRIES, surfaceEntryProblem } from '../permissions/executable-surface.js';
import { lazySchema } from './lazy-schema.js';
import { pathUriSchema, u64Schema } from './primitives.js';
import type { UnknownFieldParams } from './serde-messages.js';

/**
 * The sandbox context, as the Codex exec-server defines it. Lenient where the reference is lenient (unknown
 * keys ignored, `none` for deny, the `current_working_directory` alias, unknown special kinds kept)
 * and strict on everything that decides what is reachable.
 *
 * Unknown keys stay ignored here, unlike in the params around it: Codex clients of different
 * versions send fields this version does not use (`policyContext`, an entry's
 * `missing_path_behavior`), and a misspelled field of the context fails closed anyway (a required
 * one is missing; a missing `network`, `windowsSandboxLevel`, `workspaceRoots` or
 * `temporaryDirectories` grants less, not more). The one exception is a known special path: there a
 * misspelled `subpath` would widen the entry to the whole project, so its unknown keys are refused.
 */

export const ACCESS_VALUES = ['read', 'write', 'deny'] as const;
export type Access = (typeof ACCESS_VALUES)[number];

export const accessSchema = lazySchema(() =>
  z.preprocess((value) => (value === 'none' ? 'deny' : value), z.enum(ACCESS_VALUES)),
);

export const SPECIAL_KINDS = ['root', 'minimal', 'project_roots', 'tmpdir', 'slash_tmp'] as const;
/** The special kinds this version understands, plus `unknown` for anything newer. */
export type SpecialKind = (typeof SPECIAL_KINDS)[number] | 'unknown';

export type FileSystemSpecialPath =
  | { kind: 'root' }
  | { kind: 'minimal' }
  | { kind: 'project_roots'; subpath: string | null }
  | { kind: 'tmpdir' }
  | { kind: 'slash_tmp' }
  /** A kind from a newer client: kept so it round-trips, but it grants nothing (fail closed). */
  | { kind: 'unknown'; raw: Record<string, unknown> };

const KIND_ALIASES: Record<string, string> = { current_working_directory: 'project_roots' };

const KIND_FIELDS: Record<Exclude<SpecialKind, 'unknown'>, readonly string[]> = {
  root: ['kind'],
  minimal: ['kind'],
  project_roots: ['kind', 'subpath'],
  tmpdir: ['kind'],
  slash_tmp: ['kind'],
};

function isKnownKind(kind: string): kind is keyof typeof KIND_FIELDS {
  return Object.hasOwn(KIND_FIELDS, kind);
}

/**
 * A `project_roots` subpath is joined onto each workspace root, so it must stay inside it: an
 * absolute path or a `..` segment would turn "the project" into anywhere on the disk.
 */
function subpathProblem(subpath: string): string | null {
  if (subpath.includes('\0')) return 'project_roots subpath must not contain NUL';
  if (/^([\\/]|[A-Za-z]:)/.test(subpath)) return `project_roots subpath \`${subpath}\` must be relative`;
  if (subpath.split(/[\\/]/).includes('..'))
    return `project_roots subpath \`${subpath}\` must not contain \`..\``;
  return null;
}

export const specialPathSchema = lazySchema(() =>
  z
    .looseObject({ kind: z.string(), subpath: z.string().nullish() })
    .transform((value, ctx): FileSystemSpecialPath => {
      const kind = KIND_ALIASES[value.kind] ?? value.kind;
      if (isKnownKind(kind)) {
        const knownFields = KIND_FIELDS[kind];
        const unknownField = Object.keys(value).find((key) => !knownFields.includes(key));
        if (unknownField !== undefined) {
          const params: UnknownFieldParams = { unknownField, knownFields };
          ctx.addIssue({ code: 'custom', params, input: value });
          return z.NEVER;
        }
      }
      switch (kind) {
        case 'root':
        case 'minimal':
        case 'tmpdir':
        case 'slash_tmp':
          return { kind };
        case 'project_roots': {
          const subpath = value.subpath ?? null;
          const problem = subpath === null ? null : subpathProblem(subpath);
          if (problem !== null) {
            ctx.addIssue({ code: 'custom', message: problem, path: ['subpath'], input: subpath });
            return z.NEVER;
          }
          return { kind, subpath: subpath === '' ? null : subpath };
        }
        default:
          return { kind: 'unknown', raw: { ...value } };
      }
    }),
);

export const globPatternSchema = lazySchema(() =>
  z.string().refine((p) => p.length > 0 && !p.includes('\0'), {
    message: 'glob_pattern must be a non-empty string without NUL',
  }),
);

export const fileSystemPathSchema = lazySchema(() =>
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('path'), path: pathUriSchema }),
    z.object({ type: z.literal('special'), value: specialPathSchema() }),
    z.object({ type: z.literal('glob_pattern'), pattern: globPatternSchema() }),
  ]),
);
export type FileSystemPath = z.output<ReturnType<typeof fileSystemPathSchema>>;

export const fileSystemEntrySchema = lazySchema(() =>
  z.object({ path: fileSystemPathSchema(), access: accessSchema() }),
);
export type FileSystemEntry = z.output<ReturnType<typeof fileSystemEntrySchema>>;

export const managedFileSystemSchema = lazySchema(() =>
  z.discriminatedUnion('type', [
    z.object({
      type: z.literal('restricted'),
      entries: z.array(fileSystemEntrySchema()).max(LIMITS.policyMaxEntries, {
        message: `a sandbox policy may hold at most ${LIMITS.policyMaxEntries} file_system entries`,
      }),
      glob_scan_max_depth: u64Schema.nullish(),
    }),
    z.object({ type: z.literal('unrestricted') }),
  ]),
);
export type ManagedFileSystem = z.output<ReturnType<typeof managedFileSystemSchema>>;

export const networkSchema = lazySchema(() => z.enum(['restricted', 'enabled']));

/**
 * Kept as written (a parsed context is sent on as it is, by the remote client among others); the
 * proxy and `why` parse the entries again where they use them, and this check means they can.
 */
const networkEntrySchema = lazySchema(() =>
  z.string().superRefine((text, ctx) => {
    const entry = parseNetworkEntry(text);
    if (typeof entry === 'string')
      ctx.addIssue({ code: 'custom', message: `network entry \`${text}\`: ${entry}`, input: text });
  }),
);

const networkEntriesSchema = lazySchema(() =>
  z.array(networkEntrySchema()).max(LIMITS.networkMaxEntries, {
    message: `a network allowlist may hold at most ${LIMITS.networkMaxEntries} entries in each list`,
  }),
);

/**
 * An extension beyond the reference (whose `network` is only `restricted` or `enabled`): the hosts
 * a command may reach through the broker's proxy, with `network` left `restricted`. A client of the
 * reference ignores the field and gives such a command no network at all, so it never widens what
 * the reference would allow. Strict, unlike the context around it: a misspelled `deny` would
 * otherwise drop every deny entry.
 */
export const networkDomainsSchema = lazySchema(() =>
  z.strictObject({
    allow: networkEntriesSchema(),
    deny: networkEntriesSchema().default([]),
  }),
);
export type NetworkDomains = z.output<ReturnType<typeof networkDomainsSchema>>;

/**
 * An extension beyond the reference: host unix sockets a command may reach, each through a relay of
 * the broker (the command itself still cannot create an AF_UNIX socket; see the broker's
 * network/unix-relay.ts for why). A client of the reference ignores the field and reaches none.
 */
export const unixSocketsSchema = lazySchema(() =>
  z.array(pathUriSchema).max(LIMITS.unixSocketMaxEntries, {
    message: `a context may relay at most ${LIMITS.unixSocketMaxEntries} unix sockets`,
  }),
);

/** Where a profile runs commands without a sandbox, an allowlist could not be enforced: refused. */
const unenforceableDomains = lazySchema(() =>
  z
    .never({
      error: 'network_domains needs `managed` permissions: this profile runs commands without a sandbox',
    })
    .optional(),
);

/** Likewise a socket list: without a sandbox every socket is reachable, so naming some means nothing. */
const unenforceableSockets = lazySchema(() =>
  z
    .never({
      error: 'unix_sockets needs `managed` permissions: this profile runs commands without a sandbox',
    })
    .optional(),
);

export const permissionProfileSchema = lazySchema(() =>
  z.discriminatedUnion('type', [
    z
      .object({
        type: z.literal('managed'),
        file_system: managedFileSystemSchema(),
        // The helper never needs the network; a missing value is read as the safe one.
        network: networkSchema().default('restricted'),
        network_domains: networkDomainsSchema().nullish(),
        unix_sockets: unixSocketsSchema().nullish(),
      })
      .superRefine((profile, ctx) => {
        // `enabled` already reaches every host; an allowlist beside it would mean the reference grants
        // all of it while this broker grants a part: the two must not read one context differently.
        if (profile.network === 'enabled' && profile.network_domains != null)
          ctx.addIssue({
            code: 'custom',
            path: ['network_domains'],
            message:
              'network_domains narrows a `restricted` network to the hosts it allows; with `enabled` every host is reachable already',
          });
        // The relays listen inside the command's own network namespace; with the host's network they
        // would listen on the host's loopback, for every local process.
        if (profile.network === 'enabled' && profile.unix_sockets != null && profile.unix_sockets.length > 0)
          ctx.addIssue({
            code: 'custom',
            path: ['unix_sockets'],
            message:
              "unix_sockets are relayed into a command's own network namespace; with `network: enabled` it has none (use network_domains for its network instead)",
          });
      }),
    z.object({
      type: z.literal('disabled'),
      network_domains: unenforceableDomains(),
      unix_sockets: unenforceableSockets(),
    }),
    z.object({
      type: z.literal('external'),
      network: networkSchema().nullish(),
      network_domains: unenforceableDomains(),
      unix_sockets: unenforceableSockets(),
    }),
  ]),
);
export type PermissionProfile = z.output<ReturnType<typeof permissionProfileSchema>>;
/** The only profile shape that needs a platform sandbox (subject to the full-disk-write rule). */
export type RestrictedProfile = Extract<PermissionProfile, { type: 'managed' }> & {
  file_system: Extract<ManagedFileSystem, { type: 'restricted' }>;
};

/** The platform sandboxes (the broker's backends), by the name `explain` and `doctor` give. */
export const SANDBOX_BACKENDS = ['bwrap', 'landlock', 'seatbelt', 'restricted-token'] as const;
export type SandboxBackendName = (typeof SANDBOX_BACKENDS)[number];

export const WINDOWS_SANDBOX_LEVELS = ['disabled', 'restricted-token', 'elevated', 'mxc'] as const;
export type WindowsSandboxLevel = (typeof WINDOWS_SANDBOX_LEVELS)[number];

/**
 * fs-sandbox's extension of the context (an extra field the reference's types ignore): what the
 * executable surface (permissions/executable-surface.ts) protects beyond its fixed entries, and
 * where a command may create a git repository of its own. Strict: a misspelled key here would
 * silently protect less than the policy says.
 */
export const executableSurfaceSchema = lazySchema(() =>
  z.strictObject({
    /** Names or relative paths protected at any depth below every writable root (`.vscode/tasks.json`). */
    protect: z
      .array(
        z.string().superRefine((path, ctx) => {
          const problem = surfaceEntryProblem(path);
          if (problem !== null) ctx.addIssue({ code: 'custom', message: `protect entry ${problem}` });
        }),
      )
      .max(SURFACE_EXTENSION_MAX_ENTRIES)
      .optional(),
    /**
     * Directories in or below which a command's `git init` or `git clone` may leave a new repository
     * on the host: its data is committed, its config and hooks never are.
     */
    allowNestedRepositories: z.array(pathUriSchema).max(SURFACE_EXTENSION_MAX_ENTRIES).optional(),
  }),
);
export type ExecutableSurfacePolicy = z.output<ReturnType<typeof executableSurfaceSchema>>;

export const sandboxContextSchema = lazySchema(() =>
  z.object({
    permissions: permissionProfileSchema(),
    // The reference requires this field; defaulting to `disabled` is the fail-closed choice (on
    // Windows a restricted policy at level `disabled` is refused, never run unsandboxed).
    windowsSandboxLevel: z.enum(WINDOWS_SANDBOX_LEVELS).default('disabled'),
    cwd: pathUriSchema.nullish(),
    workspaceRoots: z.array(pathUriSchema).nullish(),
    userHomeDir: pathUriSchema.nullish(),
    temporaryDirectories: z.array(pathUriSchema).nullish(),
    windowsSandboxPrivateDesktop: z.boolean().nullish(),
    useLegacyLandlock: z.boolean().nullish(),
    executableSurface: executableSurfaceSchema().nullish(),
    /**
     * fs-sandbox's extension: the platform sandbox this context must run under, else
     * `sandbox_unavailable` (a harness that relies on bwrap's namespaces refuses the Landlock
     * backend this way). Absent: whichever the machine offers.
     */
    requireBackend: z.enum(SANDBOX_BACKENDS).nullish(),
  }),
);
export type SandboxContext = z.output<ReturnType<typeof sandboxContextSchema>>;
/**
 * The `sandbox` field of every method's params: one schema object, so the parse of a context kept
 * by its text (context-memo.ts) is reused only where this very schema would have made it.
 *
 * It parses exactly as `sandboxContextSchema().nullish()` (its declared type), but the context's
 * own schema, the largest of all, is built only when a context is first parsed: a request whose
 * context is null or absent (the CLI's `--no-sandbox`) never builds it. `z.lazy` alone would not
 * do: zod asks the field whether it is optional when it first parses the params around it, and a
 * lazy schema answers by building what it wraps; behind `z.unknown().pipe(…)` the question is
 * answered by `z.unknown()`.
 */
export const sandboxFieldSchema = lazySchema(
  () => z.unknown().pipe(z.lazy(sandboxContextSchema)).nullish() as unknown as SandboxFieldSchema,
);
type SandboxFieldSchema = z.ZodOptional<z.ZodNullable<ReturnType<typeof sandboxContextSchema>>>;
/** What a caller may write before defaults are applied (e.g. without `windowsSandboxLevel`). */
export type SandboxContextInput = z.input<ReturnType<typeof sandboxContextSchema>>;

export function isRestrictedProfile(profile: PermissionProfile): profile is RestrictedProfile {
  return profile.type === 'managed' && profile.file_system.type === 'restricted';
}
