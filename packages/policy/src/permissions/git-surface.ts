import type { HostOs } from '../host-os.js';
import { isAbsoluteNative, joinPath, parentPath } from '../native-path.js';

/**
 * What git makes executable beyond the `.git` name (executable-surface.ts), as pure decisions over
 * facts the caller reads from the disk where it acts (the helper through its opened directories,
 * the broker for `why`):
 *
 * - A directory laid out as a git directory is one, whatever its name: git treats it as a
 *   repository when it holds `HEAD` and either `objects` and `refs`, or a `commondir` naming them
 *   (a linked worktree's git directory). That is what a gitfile's `gitdir: ../stash` names, and what
 *   a bare repository is. Nothing may be written inside one, and no write may complete the layout
 *   in a directory that lacks it.
 * - The directory a repository's `core.hooksPath` names (husky's `.husky`) holds hooks git runs.
 * - Inside a git directory, a command's own git may leave repository DATA (objects, refs, the
 *   index, logs): the allowlist below, each entry with its reason. Everything else there (config,
 *   hooks, info/attributes, the pointers commondir and gitdir) steers or runs code, and is refused.
 */

/** The entries that make a directory a git directory (git's is_git_directory). */
export const GIT_DIRECTORY_MARKERS = ['HEAD', 'objects', 'refs', 'commondir'] as const;
export type GitDirectoryMarker = (typeof GIT_DIRECTORY_MARKERS)[number];

export function gitDirectoryMarker(name: string): GitDirectoryMarker | null {
  // Folded: on a case-insensitive file system `head` is `HEAD`.
  const upper = name.toLowerCase() === 'head' ? 'HEAD' : name.toLowerCase();
  return (GIT_DIRECTORY_MARKERS as readonly string[]).includes(upper) ? (upper as GitDirectoryMarker) : null;
}

/** True when a directory holding these markers is a git directory. */
export function isGitDirectoryLayout(present: ReadonlySet<GitDirectoryMarker>): boolean {
  return present.has('HEAD') && (present.has('commondir') || (present.has('objects') && present.has('refs')));
}

/**
 * True when creating `name` in a directory holding `present` would complete a git directory's
 * layout there (the last of HEAD, objects and refs, or HEAD beside commondir).
 */
export function completesGitDirectory(present: ReadonlySet<GitDirectoryMarker>, name: string): boolean {
  const marker = gitDirectoryMarker(name);
  if (marker === null || present.has(marker)) return false;
  return isGitDirectoryLayout(new Set([...present, marker]));
}

/** One kind of repository data a command's git may leave in a git directory. */
interface RepositoryData {
  /** Relative path in the git directory; a trailing `/` means everything below that directory. */
  path: string;
  reason: string;
}

/**
 * Repository data: what `git add`, `git commit`, `git fetch`, `git merge` and `git stash` write
 * besides configuration. None of it is read as configuration or run: objects are content-addressed
 * bytes, refs and HEAD name commits, logs record them, the index is the staging area.
 */
export const REPOSITORY_DATA: readonly RepositoryData[] = [
  { path: 'objects/', reason: 'the object store: content-addressed data git never runs' },
  { path: 'refs/', reason: 'branches, tags and stashes: names of commits' },
  { path: 'logs/', reason: 'reflogs: the history of each ref' },
  { path: 'packed-refs', reason: 'refs packed in one file' },
  { path: 'HEAD', reason: 'the checked-out branch or commit' },
  { path: 'index', reason: 'the staging area' },
  { path: 'ORIG_HEAD', reason: 'the commit before a reset, merge or rebase' },
  { path: 'FETCH_HEAD', reason: 'what the last fetch brought' },
  { path: 'MERGE_HEAD', reason: 'a merge in progress' },
  { path: 'MERGE_MSG', reason: 'a merge message being written' },
  { path: 'MERGE_MODE', reason: 'a merge in progress' },
  { path: 'AUTO_MERGE', reason: 'a merge in progress' },
  { path: 'CHERRY_PICK_HEAD', reason: 'a cherry-pick in progress' },
  { path: 'REVERT_HEAD', reason: 'a revert in progress' },
  { path: 'COMMIT_EDITMSG', reason: 'the last commit message' },
  { path: 'SQUASH_MSG', reason: 'a squash message being written' },
  { path: 'TAG_EDITMSG', reason: 'the last tag message' },
  { path: 'description', reason: 'a line of text for gitweb' },
  { path: 'shallow', reason: 'the commits a shallow clone stops at' },
  { path: 'info/exclude', reason: 'ignore patterns: they hide files, never run anything' },
  { path: 'rr-cache/', reason: 'recorded conflict resolutions' },
];

/** Inside the allowlisted places, what still redirects git (named so a refusal says why). */
const NOT_DATA: ReadonlyArray<{ path: string; reason: string }> = [
  { path: 'objects/info/alternates', reason: 'it names other object stores git then reads' },
  { path: 'objects/info/http-alternates', reason: 'it names other object stores git then reads' },
];

/** Why well-known non-data entries are refused (anything else unlisted gets the generic reason). */
const EXECUTABLE_ENTRIES: Readonly<Record<string, string>> = {
  config: "git's configuration: core.fsmonitor, core.pager, aliases and filters run commands",
  'config.worktree': "a worktree's configuration (run like config)",
  hooks: 'hooks: git runs them',
  commondir: 'it names the git directory whose config and hooks apply',
  gitdir: 'it names the git directory a worktree uses',
  'info/attributes': 'attributes choose the filter and diff drivers git runs',
  modules: "submodules' git directories, each with its own config and hooks",
  worktrees: "linked worktrees' git directories and their pointers",
};

export type RepositoryDataDecision = { allowed: true } | { allowed: false; reason: string };

/** Whether `segments` (relative to a git directory) name repository data a command may leave. */
export function repositoryDataDecision(segments: readonly string[]): RepositoryDataDecision {
  const relative = segments.join('/');
  const last = segments.at(-1) ?? '';
  if (last.endsWith('.lock')) {
    return { allowed: false, reason: 'a lock file git left behind (it would block the host’s git)' };
  }
  const refused = NOT_DATA.find((entry) => relative === entry.path);
  if (refused !== undefined) return { allowed: false, reason: refused.reason };
  const allowed = REPOSITORY_DATA.some((entry) =>
    entry.path.endsWith('/')
      ? relative === entry.path.slice(0, -1) || relative.startsWith(entry.path)
      : relative === entry.path,
  );
  if (allowed || /^sharedindex\.[0-9a-f]+$/.test(relative)) return { allowed: true };
  const known =
    EXECUTABLE_ENTRIES[relative] ??
    EXECUTABLE_ENTRIES[segments[0] ?? ''] ??
    'not repository data git only stores';
  return { allowed: false, reason: known };
}

/** What a git config file says that the surface needs, every value as written (each one counts). */
export interface GitConfigFacts {
  /** `core.hooksPath` values. */
  hooksPaths: string[];
  /** `core.worktree` values (a relative hooksPath may be taken against it). */
  worktrees: string[];
  /** `include.path` and `includeIf.*.path` values: more config files git reads. */
  includes: string[];
}

/**
 * Reads the keys the surface needs from a git config file's text, the way git's parser reads them:
 * sections and keys case-insensitive (`[core]`, `[Core]`, `hookspath`), a subsection in quotes or
 * after a dot, quoted values with `\"` `\\` `\n` `\t` `\b` escapes, a trailing `\` continuing the
 * line, `#` and `;` comments outside quotes, a variable on its section's line. Linear in the text;
 * the caller bounds the text.
 */
export function parseGitConfig(text: string): GitConfigFacts {
  const facts: GitConfigFacts = { hooksPaths: [], worktrees: [], includes: [] };
  let section = '';
  let position = 0;
  const length = text.length;
  const skipSpaces = (): void => {
    while (position < length && (text[position] === ' ' || text[position] === '\t')) position++;
  };
  const skipLine = (): void => {
    while (position < length && text[position] !== '\n') position++;
    position++;
  };
  while (position < length) {
    skipSpaces();
    const char = text[position];
    if (char === undefined) break;
    if (char === '\n' || char === '\r') {
      position++;
      continue;
    }
    if (char === '#' || char === ';') {
      skipLine();
      continue;
    }
    if (char === '[') {
      const close = text.indexOf(']', position);
      if (close === -1) break;
      section = sectionName(text.slice(position + 1, close));
      position = close + 1;
      continue;
    }
    const nameStart = position;
    while (position < length && /[A-Za-z0-9-]/.test(text[position] as string)) position++;
    const name = text.slice(nameStart, position).toLowerCase();
    if (name === '') {
      skipLine();
      continue;
    }
    skipSpaces();
    if (text[position] !== '=') {
      // A bare `key` (true), or a malformed line git would reject: nothing the surface reads.
      skipLine();
      continue;
    }
    position++;
    const value = readValue();
    const key = `${section}.${name}`;
    if (key === 'core.hookspath') facts.hooksPaths.push(value);
    else if (key === 'core.worktree') facts.worktrees.push(value);
    else if (name === 'path' && (section === 'include' || section.startsWith('includeif.')))
      facts.includes.push(value);
  }
  return facts;

  function readValue(): string {
    let value = '';
    let pendingSpace = '';
    let quoted = false;
    skipSpaces();
    while (position < length) {
      const char = text[position] as string;
      if (char === '\n' && !quoted) break;
      if (char === '\r' && text[position + 1] === '\n' && !quoted) break;
      if (!quoted && (char === '#' || char === ';')) {
        while (position < length && text[position] !== '\n') position++;
        break;
      }
      position++;
      if (char === '\\') {
        const next = text[position];
        position++;
        if (next === '\n') continue;
        if (next === '\r' && text[position] === '\n') {
          position++;
          continue;
        }
        const escaped = next === 'n' ? '\n' : next === 't' ? '\t' : next === 'b' ? '\b' : next;
        value += pendingSpace + (escaped ?? '');
        pendingSpace = '';
        continue;
      }
      if (char === '"') {
        value += pendingSpace;
        pendingSpace = '';
        quoted = !quoted;
        continue;
      }
      if (!quoted && (char === ' ' || char === '\t')) {
        pendingSpace += char;
        continue;
      }
      value += pendingSpace + char;
      pendingSpace = '';
    }
    return value;
  }
}

/** `core`, `includeif.gitdir:x` from a header's inside (`core`, `includeIf "gitdir:x"`, `branch.main`). */
function sectionName(header: string): string {
  const trimmed = header.trim();
  const quote = trimmed.indexOf('"');
  if (quote === -1) {
    // Legacy `[section.subsection]`: the whole name folds.
    return trimmed.toLowerCase();
  }
  const name = trimmed.slice(0, quote).trim().toLowerCase();
  const subsection = trimmed.slice(quote + 1).replace(/"$/, '');
  return `${name}.${subsection}`;
}

/**
 * A config path value (git's `pathname` type) as a native absolute path: `~/` is the user's home,
 * a relative one is taken against `base`. Null when it cannot be resolved here (`~user/`,
 * `%(prefix)/`, or `~/` without a known home).
 */
export function configPath(value: string, base: string, home: string | null, os: HostOs): string | null {
  if (value === '') return null;
  if (value === '~' || value.startsWith('~/'))
    return home === null ? null : joinPath(os, home, value.slice(2));
  if (value.startsWith('~') || value.startsWith('%(')) return null;
  return isAbsoluteNative(os, value) ? joinPath(os, value) : joinPath(os, base, value);
}

/** The `gitdir:` a gitfile names, as written (its first line), or null when it is not a gitfile. */
export function gitfileTarget(text: string): string | null {
  const line = text.split('\n')[0]?.trim() ?? '';
  if (!line.startsWith('gitdir:')) return null;
  const target = line.slice('gitdir:'.length).trim();
  return target === '' ? null : target;
}

/** Bytes of one config file or gitfile the surface reads, include depth, config files per repository. */
export const GIT_CONFIG_MAX_BYTES = 64 * 1024;
export const GIT_CONFIG_MAX_INCLUDE_DEPTH = 10;
export const GIT_CONFIG_MAX_FILES = 32;

/** How the surface reads a repository's files: synchronous, bounded by the caller, symlinks followed as git follows them. */
export interface GitFileProbe {
  /** What is at `path`: a file, a directory, something else, or nothing (null). */
  kind(path: string): 'file' | 'directory' | 'other' | null;
  /** The text of the regular file at `path` (at most GIT_CONFIG_MAX_BYTES), or null. */
  read(path: string): string | null;
}

/**
 * The hooks directories the repository whose work tree is `worktree` (it holds `.git`) names:
 * every `core.hooksPath` value of its config files — the git directory's `config` and
 * `config.worktree`, the common directory's `config` for a linked worktree, and what they include,
 * up to git's own include depth, relative to the including file — each relative one taken against
 * the work tree (where git runs hooks), the git directory (a bare repository) and every
 * `core.worktree`, so that no reading of it is missed. Empty when `.git` names no git directory.
 */
export function repositoryHooksDirectories(
  worktree: string,
  probe: GitFileProbe,
  home: string | null,
  os: HostOs,
): string[] {
  const dotGit = joinPath(os, worktree, '.git');
  let gitDir: string | null = null;
  const dotGitKind = probe.kind(dotGit);
  if (dotGitKind === 'directory') gitDir = dotGit;
  else if (dotGitKind === 'file') {
    const target = gitfileTarget(probe.read(dotGit) ?? '');
    gitDir = target === null ? null : configPath(target, worktree, home, os);
  }
  if (gitDir === null) return [];
  const configFiles = [joinPath(os, gitDir, 'config'), joinPath(os, gitDir, 'config.worktree')];
  const commondir =
    probe
      .read(joinPath(os, gitDir, 'commondir'))
      ?.split('\n')[0]
      ?.trim() ?? '';
  const common = commondir === '' ? null : configPath(commondir, gitDir, home, os);
  if (common !== null) configFiles.push(joinPath(os, common, 'config'));

  const values: string[] = [];
  const bases: string[] = [worktree, gitDir];
  let files = 0;
  const read = (file: string, depth: number): void => {
    if (depth > GIT_CONFIG_MAX_INCLUDE_DEPTH || files >= GIT_CONFIG_MAX_FILES) return;
    files++;
    const text = probe.read(file);
    if (text === null) return;
    const facts = parseGitConfig(text);
    values.push(...facts.hooksPaths);
    for (const value of facts.worktrees) {
      const resolved = configPath(value, gitDir, home, os);
      if (resolved !== null) bases.push(resolved);
    }
    const directory = parentPath(os, file) ?? file;
    for (const include of facts.includes) {
      const resolved = configPath(include, directory, home, os);
      if (resolved !== null) read(resolved, depth + 1);
    }
  };
  for (const file of configFiles) read(file, 0);
  const directories = new Set<string>();
  for (const value of values) {
    for (const base of bases) {
      const resolved = configPath(value, base, home, os);
      if (resolved !== null) directories.add(resolved);
    }
  }
  return [...directories];
}
