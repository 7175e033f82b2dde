import type { z } from 'zod';
import { FsError } from '../error-kinds.js';

/**
 * Zod issues rendered the way the reference's serde errors read ("missing field `path`",
 * "unknown variant `x`, expected one of `a`, `b`"), so a Codex client sees the text it already
 * knows. The dotted path of the offending field travels in `data.field` for callers that want it.
 */

type RawIssue = Parameters<z.core.$ZodErrorMap>[0];

function quoteList(values: readonly unknown[]): string {
  const quoted = values.map((v) => `\`${String(v)}\``);
  if (quoted.length === 1) return quoted[0] as string;
  if (quoted.length === 2) return `${quoted[0]} or ${quoted[1]}`;
  return `one of ${quoted.join(', ')}`;
}

/** serde's `Unexpected` wording for a JSON value. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
  if (typeof value === 'boolean') return `boolean \`${value}\``;
  if (typeof value === 'number')
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  if (Array.isArray(value)) return 'sequence';
  return 'map';
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  boolean: 'a boolean',
  number: 'a number',
  int: 'an integer',
  object: 'a map',
  array: 'a sequence',
  record: 'a map',
};

function lastKey(path: readonly PropertyKey[] | undefined): string | undefined {
  const key = path?.[path.length - 1];
  return typeof key === 'string' ? key : undefined;
}

function variantMessage(input: unknown, options: readonly unknown[], field: string | undefined): string {
  if (input === undefined && field !== undefined) return `missing field \`${field}\``;
  if (typeof input !== 'string') return `invalid type: ${describe(input)}, expected ${quoteList(options)}`;
  return `unknown variant \`${input}\`, expected ${quoteList(options)}`;
}

/** The error map passed to every parse: it only words issues that carry no explicit message. */
export const serdeErrorMap: z.core.$ZodErrorMap = (issue: RawIssue) => {
  switch (issue.code) {
    case 'invalid_type': {
      const field = lastKey(issue.path);
      if (issue.input === undefined && field !== undefined) return `missing field \`${field}\``;
      return `invalid type: ${describe(issue.input)}, expected ${EXPECTED[issue.expected] ?? issue.expected}`;
    }
    case 'invalid_value':
      return variantMessage(issue.input, issue.values, lastKey(issue.path));
    case 'invalid_union': {
      if (issue.discriminator === undefined) return undefined;
      const tagged = issue.input as Record<string, unknown> | undefined;
      const options: readonly unknown[] =
        'options' in issue && Array.isArray(issue.options) ? issue.options : [];
      return variantMessage(tagged?.[issue.discriminator], options, issue.discriminator);
    }
    default:
      return undefined;
  }
};

/** The first issue of a failed parse as a typed wire error (`invalid_params`, -32602). */
export function issueToFsError(error: z.ZodError): FsError {
  const issue = error.issues[0];
  if (!issue) return new FsError('invalid_params', 'invalid params');
  const field = issue.path.map(String).join('.');
  return new FsError('invalid_params', issue.message, field === '' ? undefined : { field });
}

export function safeParseOptions(): { error: z.core.$ZodErrorMap; reportInput: true } {
  return { error: serdeErrorMap, reportInput: true };
}
