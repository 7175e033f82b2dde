import { lstatSync } from 'node:fs';
import type { PathGuard } from '@fs-sandbox/policy/core';
import type { Operation } from '../operation.js';
import { pathParam, requiredBoolean, requiredCount, requiredString, requiredStringList } from '../params.js';
import { searchArgv } from '../ripgrep/rg-args.js';
import { policyExcludes } from '../ripgrep/rg-excludes.js';
import { requireRipgrep, ripgrepFailure, runRipgrep } from '../ripgrep/rg-run.js';
import { parseRipgrepEvent } from '../ripgrep/rg-stream.js';
import { SearchCollector } from '../ripgrep/search-collector.js';
import { ripgrepPlace } from '../ripgrep/search-root.js';

const NEWLINE = 0x0a;

/**
 * fs/search: ripgrep run inside this helper's sandbox over `path`, its JSON output collected within
 * the bounds. What the sandbox masks cannot be read by ripgrep at all; the policy's excludes only
 * spare it the attempt.
 */
export const searchOperation: Operation<'fs/search'> = {
  parse: (raw, os) => ({
    path: pathParam(raw, 'path', os),
    pattern: requiredString(raw, 'pattern'),
    fixedStrings: requiredBoolean(raw, 'fixedStrings'),
    caseSensitive: requiredBoolean(raw, 'caseSensitive'),
    include: requiredStringList(raw, 'include'),
    exclude: requiredStringList(raw, 'exclude'),
    includeIgnored: requiredBoolean(raw, 'includeIgnored'),
    includeHidden: requiredBoolean(raw, 'includeHidden'),
    contextLines: requiredCount(raw, 'contextLines'),
    maxResults: requiredCount(raw, 'maxResults'),
    filesOnly: requiredBoolean(raw, 'filesOnly'),
  }),
  async run(params, context) {
    const started = performance.now();
    const ripgrep = requireRipgrep(context.ripgrep, 'fs/search');
    const place = await ripgrepPlace(params.path, context.os);
    const argv = searchArgv(
      { ...params, path: place.operand },
      policyExcludes(context.guard, place.cwd, context.os),
    );
    const collector = new SearchCollector(params, context.os);
    const denied = deniedIdentityCheck(context.guard);
    const run = await runRipgrep(ripgrep, argv, place.cwd, NEWLINE, (record) => {
      const event = parseRipgrepEvent(record);
      if (event === null) return true;
      if (event.type !== 'summary') {
        event.path = place.nativeOf(event.path);
        if (denied(event.path)) return true;
      }
      return collector.add(event);
    });
    const failure = ripgrepFailure(run);
    if (failure !== null) throw failure;
    if (run.stopped) collector.truncated = true;
    return { response: collector.finish(Math.round(performance.now() - started)) };
  },
};

/**
 * A denied file's other names (hard links) are refused by identity on every read: ripgrep, which
 * opens them by name, reads them, so their lines are dropped here before they reach a reply. The
 * file ripgrep read may have been swapped since, which only ever drops lines, never adds one.
 */
function deniedIdentityCheck(guard: PathGuard | null): (path: string) => boolean {
  if (guard === null || guard.deniedIdentities.length === 0) return () => false;
  const known = new Map<string, boolean>();
  return (path) => {
    let denied = known.get(path);
    if (denied === undefined) {
      const stats = lstatSync(path, { bigint: true, throwIfNoEntry: false });
      denied = stats !== undefined && guard.deniedIdentities.includes(`${stats.dev}:${stats.ino}`);
      known.set(path, denied);
    }
    return denied;
  };
}
