import { globLiteralPrefix, joinPath, parentPath, parseDenyGlob, type SandboxPlan } from '@fs-sandbox/policy';
import type { HelperRuntime } from '../backend.js';
import { apfsPathIsInside, sameApfsPath } from './apfs-names.js';
import { MACOS_ALIAS_LINKS, resolveMacosTopLevelAlias } from './macos-path-aliases.js';
import { SeatbeltParams } from './seatbelt-params.js';
import { exactPathRegex, globRegex, subtreePathRegex } from './seatbelt-path-regex.js';

/** A Seatbelt profile and the parameters it reads; the profile text names no plan path. */
export interface SeatbeltProfile {
  text: string;
  params: Array<[string, string]>;
}

/**
 * The fixed platform paths the profile names directly. They are the same on every Mac, never come
 * from a policy, and the structural tests check that nothing else appears as a string literal.
 */
export const SEATBELT_PLATFORM_LITERALS = {
  /** System code dyld maps executable when node starts (recent macOS keeps libraries in cryptexes). */
  executableMappings: [
    '/usr/lib',
    '/System/Cryptexes',
    '/System/Volumes/Preboot/Cryptexes',
    '/System/Library/Frameworks',
    '/System/Library/PrivateFrameworks',
    '/System/Library/SubFrameworks',
    '/Library/Apple/usr/lib',
    '/Library/Apple/System/Library/Frameworks',
    '/Library/Apple/System/Library/PrivateFrameworks',
  ],
  /** What resolving a path spelled with an alias touches: `/`, `/private` and the alias links. */
  traversal: ['/', '/private', ...MACOS_ALIAS_LINKS],
  /** Character devices the C runtime and dyld open at start-up; none of them stores data. */
  readDevices: ['/dev/null', '/dev/random', '/dev/urandom', '/dev/autofs_nowait', '/dev/dtracehelper'],
  writeDevices: ['/dev/null', '/dev/dtracehelper'],
  ioctlDevices: ['/dev/dtracehelper'],
} as const;

/**
 * sysctls node, V8 and libuv read while starting (CPU count and features, memory size, OS
 * version, own process info). Hardware and OS facts only; nothing names a file.
 */
export const SEATBELT_SYSCTL_NAMES = [
  'kern.argmax',
  'kern.hostname',
  'kern.maxfilesperproc',
  'kern.osproductversion',
  'kern.osrelease',
  'kern.ostype',
  'kern.osvariant_status',
  'kern.osversion',
  'kern.secure_kernel',
  'kern.tcsm_available',
  'kern.tcsm_enable',
  'kern.usrstack64',
  'kern.version',
  'sysctl.proc_cputype',
] as const;
export const SEATBELT_SYSCTL_PREFIXES = ['hw.', 'machdep.cpu.', 'kern.proc.pid.'] as const;

/** One path that must stay out of an allow rule, under every spelling of its name. */
interface Exclusion {
  filters: string[];
}

/**
 * Builds the Seatbelt profile for a plan. Pure: the caller (the backend's `prepare`) has already
 * checked the paths against the disk. Structure:
 *   (deny default), then the node process itself, then read allows for each readable root, read
 *   and write allows for each writable root, each allow carrying `require-not` exclusions for the
 *   denied, read-only and protected paths beneath it, then the final denies (boundary renames, hard
 *   links, network). Later rules win in SBPL, so the final denies hold whatever the allows say.
 */
export function buildSeatbeltProfile(plan: SandboxPlan, runtime: HelperRuntime): SeatbeltProfile {
  const params = new SeatbeltParams();
  const nodePath = params.ref('NODE_PATH', resolveMacosTopLevelAlias(runtime.executable.path));
  const helperBundle = params.ref('HELPER_BUNDLE', resolveMacosTopLevelAlias(runtime.helperBundle));
  const ripgrep =
    runtime.ripgrepPath === null
      ? null
      : params.ref('RIPGREP', resolveMacosTopLevelAlias(runtime.ripgrepPath));

  const denied = plan.deniedPaths.map(resolveMacosTopLevelAlias);
  const deniedExclusions = denied.map((path, i) => subtreeExclusion(params, `DENIED_${i}`, path));
  const globs = plan.denyGlobs.map(resolveMacosTopLevelAlias);
  const globExclusions = globs.map((glob, i) => ({
    filters: [`(require-not (regex ${params.ref(`DENY_GLOB_${i}`, globRegex(glob))}))`],
  }));
  /** Denied paths and deny globs that can match something inside `root`. */
  const denialsUnder = (root: string): Exclusion[] => [
    ...deniedExclusions.filter((_, i) => apfsPathIsInside(denied[i] as string, root)),
    ...globExclusions.filter((_, i) => globMayReach(globs[i] as string, root)),
  ];

  // Full-disk read is the readable root `/`, so it goes through the same parameter path as any root.
  const readableRoots = plan.fullDiskRead ? ['/'] : unique(plan.readableRoots.map(resolveMacosTopLevelAlias));
  const rootRefs: string[] = [];
  const readFilters = readableRoots.map((root, i) => {
    const rootRef = params.ref(`READABLE_ROOT_${i}`, root);
    rootRefs.push(rootRef);
    return guarded(rootRef, denialsUnder(root));
  });

  const writeFilters: string[] = [];
  const writableReadFilters: string[] = [];
  const boundaryFilters: string[] = [];
  plan.writableRoots.forEach((writable, i) => {
    const key = `WRITABLE_ROOT_${i}`;
    const root = resolveMacosTopLevelAlias(writable.root);
    const rootRef = params.ref(key, root);
    rootRefs.push(rootRef);
    const readOnly = writable.readOnlySubpaths.map(resolveMacosTopLevelAlias);
    const protectedPaths = writable.protectedNames.map((name) => joinPath('macos', root, name));
    const keptOut = [
      ...readOnly.map((path, j) => subtreeExclusion(params, `${key}_READ_ONLY_${j}`, path)),
      ...protectedPaths.map((path, j) => subtreeExclusion(params, `${key}_PROTECTED_${j}`, path)),
      ...denialsUnder(root),
    ];
    writableReadFilters.push(guarded(rootRef, denialsUnder(root)));
    writeFilters.push(guarded(rootRef, keptOut));
    // Renaming the root, or a directory between it and a kept-out path, would carry the kept-out
    // path to a name no rule protects (or take the whole boundary away).
    const inRoot = [...readOnly, ...protectedPaths, ...denied.filter((path) => apfsPathIsInside(path, root))];
    boundaryDirectories(root, inRoot).forEach((dir, j) => {
      const boundaryKey = j === 0 ? key : `${key}_BOUNDARY_${j}`;
      boundaryFilters.push(`(literal ${params.ref(boundaryKey, dir)})`);
      boundaryFilters.push(`(regex ${params.ref(`${boundaryKey}_SPELLINGS_EXACT`, exactPathRegex(dir))})`);
    });
  });

  const lines = [
    '(version 1)',
    '(deny default)',
    '',
    '; The helper process: sandbox-exec starts node once; node executes nothing but ripgrep.',
    `(allow process-exec (literal ${nodePath}))`,
    ...(ripgrep === null
      ? []
      : [
          '; fs/search and fs/glob: the helper forks and executes exactly the ripgrep binary.',
          '(allow process-fork)',
          `(allow process-exec (literal ${ripgrep}))`,
        ]),
    '(allow process-info* (target self))',
    '(allow signal (target self))',
    rule('allow sysctl-read', [
      ...SEATBELT_SYSCTL_NAMES.map((name) => `(sysctl-name "${name}")`),
      ...SEATBELT_SYSCTL_PREFIXES.map((prefix) => `(sysctl-name-prefix "${prefix}")`),
    ]),
    '; V8 sets a per-thread CPU mitigation flag through this sysctl.',
    '(allow sysctl-write (sysctl-name "kern.tcsm_enable"))',
    '',
    '; Runtime files: node, the helper bundle and ripgrep as exact files, system code for dyld.',
    `(allow file-read* file-map-executable (literal ${nodePath}))`,
    `(allow file-read* (literal ${helperBundle}))`,
    ...(ripgrep === null ? [] : [`(allow file-read* file-map-executable (literal ${ripgrep}))`]),
    rule('allow file-map-executable', literals('subpath', SEATBELT_PLATFORM_LITERALS.executableMappings)),
    '; Path lookups stat every directory above a root (realpath), not their contents; the alias',
    '; links themselves are read (readlink), and / and /private listed, to resolve /tmp, /var, /etc.',
    rule('allow file-read*', literals('literal', SEATBELT_PLATFORM_LITERALS.traversal)),
    rule(
      'allow file-read-metadata',
      [nodePath, helperBundle, ...(ripgrep === null ? [] : [ripgrep]), ...rootRefs].map(
        (ref) => `(path-ancestors ${ref})`,
      ),
    ),
    rule('allow file-read*', literals('literal', SEATBELT_PLATFORM_LITERALS.readDevices)),
    rule('allow file-write-data', literals('literal', SEATBELT_PLATFORM_LITERALS.writeDevices)),
    rule('allow file-ioctl', literals('literal', SEATBELT_PLATFORM_LITERALS.ioctlDevices)),
    '',
    '; Reads: every readable root minus the denied paths beneath it. No scratch space: the helper',
    '; writes only inside writable roots.',
    rule('allow file-read* file-test-existence', [...readFilters, ...writableReadFilters]),
  ];
  if (writeFilters.length > 0) {
    lines.push(
      '',
      '; Writes: every writable root minus its read-only subpaths, protected metadata names and denied paths.',
      rule('allow file-write*', writeFilters),
    );
  }
  if (boundaryFilters.length > 0) {
    lines.push(
      '',
      '; The sandbox must not rename away its own boundary: no unlink or rename of a writable root or',
      '; of a directory that holds a protected path.',
      rule('deny file-write-unlink', boundaryFilters),
    );
  }
  lines.push(
    '',
    '; A hard link would give a denied or read-only file a second name that no rule protects.',
    '(deny file-link)',
    '; Network is off for every helper, whatever the policy says.',
    '(deny network*)',
    '',
  );
  return { text: lines.join('\n'), params: params.entries() };
}

/** `(subpath ROOT)`, or `(require-all (subpath ROOT) (require-not …) …)` when something is kept out. */
function guarded(rootRef: string, exclusions: Exclusion[]): string {
  const subpath = `(subpath ${rootRef})`;
  if (exclusions.length === 0) return subpath;
  const filters = exclusions.flatMap((exclusion) => exclusion.filters);
  return `(require-all ${subpath}\n    ${filters.join('\n    ')})`;
}

/**
 * Keeps `path` and everything beneath it out of a rule: the exact spelling by literal and subpath
 * (`subpath` alone would still let the directory itself be created), every other spelling by regex.
 */
function subtreeExclusion(params: SeatbeltParams, key: string, path: string): Exclusion {
  const ref = params.ref(key, path);
  const spellings = params.ref(`${key}_SPELLINGS`, subtreePathRegex(path));
  return {
    filters: [
      `(require-not (literal ${ref}))`,
      `(require-not (subpath ${ref}))`,
      `(require-not (regex ${spellings}))`,
    ],
  };
}

/**
 * The root and each directory strictly between it and a kept-out path, in order. Whether a
 * kept-out path lies inside the root is decided case-insensitively, the way APFS compares names.
 */
function boundaryDirectories(root: string, keptOut: string[]): string[] {
  const between = new Set<string>();
  for (const path of keptOut) {
    for (
      let dir = parentPath('macos', path);
      dir !== null && apfsPathIsInside(dir, root);
      dir = parentPath('macos', dir)
    ) {
      if (sameApfsPath(dir, root)) break;
      between.add(dir);
    }
  }
  return [root, ...[...between].sort()];
}

/** A glob can match inside `root` when the fixed leading directory of one of its alternatives and the root overlap. */
function globMayReach(glob: string, root: string): boolean {
  return parseDenyGlob(glob, 'macos').alternatives.some((alternative) => {
    const { prefix } = globLiteralPrefix(alternative);
    return apfsPathIsInside(prefix, root) || apfsPathIsInside(root, prefix);
  });
}

function rule(head: string, filters: string[]): string {
  return `(${head}\n  ${filters.join('\n  ')})`;
}

function literals(kind: 'literal' | 'subpath', paths: readonly string[]): string[] {
  return paths.map((path) => `(${kind} "${path}")`);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
