import {
  FsError,
  type GuardEntry,
  type GuardGlob,
  type GuardReason,
  type GuardSurface,
  type PathGuard,
  surfaceEntryProblem,
} from '@fs-sandbox/policy/core';
import { isPlainObject } from './params.js';

const REASONS: ReadonlySet<string> = new Set<GuardReason>([
  'writable_root',
  'read_only',
  'protected',
  'own_code',
  'denied',
]);
const IDENTITY = /^\d{1,20}:\d{1,20}$/;

function invalid(detail: string): FsError {
  return new FsError('invalid_request', `helper request \`guard\` ${detail}`);
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

/**
 * Validates the request's `guard` (absent: null, no policy to enforce). A malformed guard is
 * refused rather than read leniently: a dropped entry would be a dropped protection.
 */
export function parseGuard(value: unknown): PathGuard | null {
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) throw invalid('must be an object');
  const { entries, denyGlobs, deniedIdentities, surface } = value;
  if (!Array.isArray(entries) || !Array.isArray(denyGlobs) || !Array.isArray(deniedIdentities)) {
    throw invalid('needs `entries`, `denyGlobs` and `deniedIdentities` arrays');
  }
  return {
    entries: entries.map((entry): GuardEntry => {
      if (
        !isPlainObject(entry) ||
        !isString(entry.path) ||
        !isString(entry.rule) ||
        !isString(entry.reason) ||
        !REASONS.has(entry.reason)
      ) {
        throw invalid('entries must be {path, reason, rule}');
      }
      return { path: entry.path, reason: entry.reason as GuardReason, rule: entry.rule };
    }),
    denyGlobs: denyGlobs.map((glob): GuardGlob => {
      if (!isPlainObject(glob) || !isString(glob.pattern)) throw invalid('denyGlobs must be {pattern}');
      return { pattern: glob.pattern };
    }),
    deniedIdentities: deniedIdentities.map((identity) => {
      if (!isString(identity) || !IDENTITY.test(identity))
        throw invalid('deniedIdentities must be "dev:ino"');
      return identity;
    }),
    surface: parseSurface(surface),
  };
}

function parseSurface(value: unknown): GuardSurface {
  if (!isPlainObject(value) || !Array.isArray(value.entries))
    throw invalid('needs a `surface` with an `entries` array');
  const { home } = value;
  if (home !== null && !isString(home)) throw invalid('surface `home` must be a string or null');
  return {
    entries: value.entries.map((entry) => {
      if (
        !isPlainObject(entry) ||
        !isString(entry.path) ||
        !isString(entry.reason) ||
        surfaceEntryProblem(entry.path) !== null
      ) {
        throw invalid('surface entries must be {path, reason} with a relative path');
      }
      return { path: entry.path, reason: entry.reason };
    }),
    home,
  };
}
