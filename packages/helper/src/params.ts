import { FsError, type HostOs, pathUriToNative } from '@fs-sandbox/policy/core';

/**
 * Light, hand-written parameter checks (the helper's start-up path must not load zod). The broker
 * has already validated the params with the full schemas; these checks exist so that the helper,
 * which also runs on its own, never acts on a value of the wrong type. Messages follow serde's
 * wording, as the reference does.
 */

function missing(field: string): FsError {
  return new FsError('invalid_params', `missing field \`${field}\``);
}

function wrongType(field: string, expected: string): FsError {
  return new FsError('invalid_params', `invalid type for \`${field}\`: expected ${expected}`);
}

function isAbsent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

/** A required `file:` URI param, converted to this host's native path. */
export function pathParam(params: Record<string, unknown>, field: string, os: HostOs): string {
  const value = params[field];
  if (value === undefined) throw missing(field);
  if (typeof value !== 'string') throw wrongType(field, 'a file URI string');
  return pathUriToNative(value, os);
}

export function optionalBoolean(params: Record<string, unknown>, field: string, fallback: boolean): boolean {
  const value = params[field];
  if (isAbsent(value)) return fallback;
  if (typeof value !== 'boolean') throw wrongType(field, 'a boolean');
  return value;
}

export function requiredBoolean(params: Record<string, unknown>, field: string): boolean {
  if (params[field] === undefined) throw missing(field);
  return optionalBoolean(params, field, false);
}

/** A required non-negative integer that a double represents exactly. */
export function requiredCount(params: Record<string, unknown>, field: string): number {
  const value = params[field];
  if (value === undefined) throw missing(field);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new FsError('invalid_params', `invalid number for \`${field}\`: expected a non-negative integer`);
  }
  return value;
}

export function optionalString(params: Record<string, unknown>, field: string): string | undefined {
  const value = params[field];
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'string') throw wrongType(field, 'a string');
  return value;
}

export function optionalObject(
  params: Record<string, unknown>,
  field: string,
): Record<string, unknown> | undefined {
  const value = params[field];
  if (isAbsent(value)) return undefined;
  if (!isPlainObject(value)) throw wrongType(field, 'an object');
  return value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}
