import { FsError, formatNativePath, type HostOs, splitNativePath } from '@fs-sandbox/policy/core';

/**
 * Light, hand-written parameter checks (the helper's start-up path must not load zod). The broker
 * has already parsed the params with the method table's schemas, applied their defaults and made
 * every path native; these checks exist so that the helper, which also runs on its own, never acts
 * on a value of the wrong type. Messages follow serde's wording, as the reference does.
 */

type Params = Record<string, unknown>;

function missing(field: string): FsError {
  return new FsError('invalid_params', `missing field \`${field}\``);
}

function wrongType(field: string, expected: string): FsError {
  return new FsError('invalid_params', `invalid type for \`${field}\`: expected ${expected}`);
}

function isAbsent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

/**
 * Under the compiled Bun helper, Bun's file-system calls answer paths below /$bunfs from the
 * files embedded in the executable instead of asking the kernel: such a path would not name what
 * the sandbox shows, so it is refused rather than answered from elsewhere.
 */
const BUN_EMBEDDED = process.versions.bun === undefined ? null : '/$bunfs';

/**
 * A required native absolute path in normal form (no `.`, `..` or empty segments, no NUL): what the
 * broker's conversion from the path URI produces, and nothing a prefix check could misread.
 */
export function pathParam(params: Params, field: string, os: HostOs): string {
  const value = params[field];
  if (value === undefined) throw missing(field);
  if (typeof value !== 'string') throw wrongType(field, 'a native path string');
  const split = value.includes('\0') ? null : splitNativePath(os, value);
  if (split === null || formatNativePath(os, split) !== value) {
    throw new FsError(
      'invalid_params',
      `invalid value for \`${field}\`: expected a normalised absolute path`,
    );
  }
  if (BUN_EMBEDDED !== null && (value === BUN_EMBEDDED || value.startsWith(`${BUN_EMBEDDED}/`))) {
    throw new FsError(
      'invalid_params',
      `invalid value for \`${field}\`: ${BUN_EMBEDDED} names the Bun helper's own embedded files, not a path on disk`,
    );
  }
  return value;
}

export function requiredBoolean(params: Params, field: string): boolean {
  const value = params[field];
  if (value === undefined) throw missing(field);
  if (typeof value !== 'boolean') throw wrongType(field, 'a boolean');
  return value;
}

/** A required non-negative integer that a double represents exactly. */
export function requiredCount(params: Params, field: string): number {
  const value = params[field];
  if (value === undefined) throw missing(field);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new FsError('invalid_params', `invalid number for \`${field}\`: expected a non-negative integer`);
  }
  return value;
}

/** One of `values`, required. */
export function requiredChoice<T extends string>(params: Params, field: string, values: readonly T[]): T {
  const value = params[field];
  if (value === undefined) throw missing(field);
  if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
    throw new FsError(
      'invalid_params',
      `invalid value for \`${field}\`: expected one of ${values.join(', ')}`,
    );
  }
  return value as T;
}

/** A string matching `pattern`, or absent (undefined). */
export function optionalMatch(
  params: Params,
  field: string,
  pattern: RegExp,
  what: string,
): string | undefined {
  const value = params[field];
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'string' || !pattern.test(value)) {
    throw new FsError('invalid_params', `invalid value for \`${field}\`: expected ${what}`);
  }
  return value;
}

export function requiredObject(params: Params, field: string): Params {
  const value = params[field];
  if (value === undefined) throw missing(field);
  if (!isPlainObject(value)) throw wrongType(field, 'an object');
  return value;
}

export function optionalObject(params: Params, field: string): Params | undefined {
  const value = params[field];
  if (isAbsent(value)) return undefined;
  if (!isPlainObject(value)) throw wrongType(field, 'an object');
  return value;
}

export function requiredBytes(params: Params, field: string): Uint8Array {
  const value = params[field];
  if (value === undefined) throw missing(field);
  if (!(value instanceof Uint8Array)) throw wrongType(field, 'bytes (binary framing)');
  return value;
}

export function isPlainObject(value: unknown): value is Params {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}

/** A non-negative integer that a double represents exactly, or absent (undefined). */
export function optionalCount(params: Params, field: string): number | undefined {
  return isAbsent(params[field]) ? undefined : requiredCount(params, field);
}

/** An optional flag (absent or null is `byDefault`). */
export function optionalBoolean(params: Params, field: string, byDefault: boolean): boolean {
  return isAbsent(params[field]) ? byDefault : requiredBoolean(params, field);
}

export function requiredString(params: Params, field: string): string {
  const value = params[field];
  if (value === undefined) throw missing(field);
  if (typeof value !== 'string') throw wrongType(field, 'a string');
  return value;
}

export function requiredStringList(params: Params, field: string): string[] {
  const value = params[field];
  if (value === undefined) throw missing(field);
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw wrongType(field, 'a list of strings');
  }
  return value;
}
