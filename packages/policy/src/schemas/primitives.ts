import { z } from 'zod';
import { parsePathUri, readPathUri } from '../path-uri.js';
import { invalidTypeMessage } from './serde-messages.js';

/** A string turned into something else by `read`, whose FsError becomes the issue's message. */
function readString<T>(read: (value: string) => T) {
  return z.string().transform((value, ctx) => {
    try {
      return read(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message, input: value });
      return z.NEVER;
    }
  });
}

/** A wire path: validated and returned in canonical `file:` form (path-uri.ts holds the rules). */
export const pathUriSchema = readString(parsePathUri);

/**
 * A path param of a method: validated like `pathUriSchema` and kept taken apart, so the broker turns
 * it into this host's native path without parsing the URI a second time.
 */
export const requestPathSchema = readString(readPathUri);

/**
 * A u64 as JSON carries it. Only safe integers are accepted: a larger number has already lost
 * precision in JSON.parse, so acting on it would act on a different value than the client sent.
 * A missing one falls through to the shared `missing field` wording.
 */
export const u64Schema = z
  .number({
    error: (issue) => (issue.input === undefined ? undefined : invalidTypeMessage(issue.input, 'u64')),
  })
  .refine((n) => Number.isSafeInteger(n) && n >= 0, { message: 'invalid number', abort: true });

/** `bool | null`, as the reference accepts for its optional flags; absent or null is `byDefault`. */
export function optionalFlagSchema(byDefault: boolean) {
  return z
    .boolean()
    .nullish()
    .transform((value) => value ?? byDefault);
}

/** A SHA-256 digest in hex; normalised to lower case so comparisons are plain string equality. */
export const sha256HexSchema = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, { message: 'expectedSha256 must be 64 hexadecimal characters' })
  .transform((hex) => hex.toLowerCase());

/** A decimal string for a device or inode number (bigint stat values do not fit a JSON number). */
export const decimalSchema = z.string().regex(/^(0|[1-9][0-9]*)$/, { message: 'expected a decimal string' });
