import type { HelperResultOf } from '@fs-sandbox/policy';
import {
  decodePathBytes,
  encodePathBytes,
  fsPathArg,
  LIMITS,
  nativeToPathUri,
} from '@fs-sandbox/policy/core';
import { lstat } from '../fs-async.js';
import type { Operation } from '../operation.js';
import { pathParam, requiredBoolean, requiredCount, requiredStringList } from '../params.js';
import { globArgv } from '../ripgrep/rg-args.js';
import { policyExcludes } from '../ripgrep/rg-excludes.js';
import { requireRipgrep, ripgrepFailure, runRipgrep } from '../ripgrep/rg-run.js';
import { ripgrepPlace } from '../ripgrep/search-root.js';

type GlobEntry = HelperResultOf<'fs/glob'>['entries'][number];

const NUL = 0x00;
// JSON framing around each entry when counting the reply size: `{"path":"","kind":"file","size":,"modifiedAtMs":},`.
const ENTRY_OVERHEAD_BYTES = 96;

/**
 * fs/glob: the files ripgrep lists under `path` (ignore files and hidden names as asked) whose
 * names match the globs, newest first, ties by path. Newest first needs every name before any is
 * returned, so up to LIMITS.searchMaxFiles names are gathered (more makes the result `truncated`),
 * then stated and sorted.
 */
export const globOperation: Operation<'fs/glob'> = {
  parse: (raw, os) => ({
    path: pathParam(raw, 'path', os),
    patterns: requiredStringList(raw, 'patterns'),
    includeIgnored: requiredBoolean(raw, 'includeIgnored'),
    includeHidden: requiredBoolean(raw, 'includeHidden'),
    maxResults: requiredCount(raw, 'maxResults'),
  }),
  async run(params, context) {
    const ripgrep = requireRipgrep(context.ripgrep, 'fs/glob');
    const place = await ripgrepPlace(params.path, context.os);
    const argv = globArgv(
      { ...params, path: place.operand },
      policyExcludes(context.guard, place.cwd, context.os),
    );
    const names: string[] = [];
    const run = await runRipgrep(ripgrep, argv, place.cwd, NUL, (record) => {
      if (names.length >= LIMITS.searchMaxFiles) return false;
      names.push(place.nativeOf(decodePathBytes(record)));
      return true;
    });
    const failure = ripgrepFailure(run);
    if (failure !== null) throw failure;
    const found: Array<{ entry: GlobEntry; sortKey: Buffer }> = [];
    for (const name of names) {
      // Gone since ripgrep listed it, or not a file: a denied file's mask is a device node in its
      // place (the name is all that is left of it, and not even that is reported).
      const stats = await lstat(fsPathArg(name)).catch(() => null);
      if (stats === null || !(stats.isFile() || stats.isSymbolicLink())) continue;
      found.push({
        sortKey: encodePathBytes(name),
        entry: {
          path: nativeToPathUri(name, context.os),
          kind: stats.isSymbolicLink() ? 'symlink' : 'file',
          size: stats.size,
          modifiedAtMs: Math.trunc(stats.mtimeMs),
        },
      });
    }
    found.sort((a, b) => b.entry.modifiedAtMs - a.entry.modifiedAtMs || Buffer.compare(a.sortKey, b.sortKey));
    let truncated = run.stopped || found.length > params.maxResults;
    const entries: GlobEntry[] = [];
    let bytes = 0;
    for (const { entry } of found.slice(0, params.maxResults)) {
      bytes += Buffer.byteLength(entry.path) + ENTRY_OVERHEAD_BYTES;
      if (bytes > LIMITS.searchMaxResponseBytes) {
        truncated = true;
        break;
      }
      entries.push(entry);
    }
    return { response: { entries, truncated } };
  },
};
