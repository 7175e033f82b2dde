import type { z } from 'zod';
import { FsError } from '../error-kinds.js';
import { closestName } from './closest-name.js';

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

/** serde's wording for a value of the wrong JSON type; `expected` as serde names it (`a string`, `u64`). */
export function invalidTypeMessage(input: unknown, expected: string): string {
  return `invalid type: ${describe(input)}, expected ${expected}`;
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

/**
 * A key no schema declares, worded like serde's `deny_unknown_fields` ("unknown field `x`, expected
 * one of …"), with the likely intended name instead of the list when one is close. `subject` says
 * whose key it is (`fs/writeFile params`), `path` where inside it.
 */
function unknownFieldMessage(
  key: string,
  known: readonly string[],
  subject: string,
  path: readonly PropertyKey[],
): string {
  const where = path.length === 0 ? subject : `${subject} at \`${path.map(String).join('.')}\``;
  const suggestion = closestName(key, known);
  if (suggestion !== null) return `unknown field \`${key}\` in ${where}; did you mean \`${suggestion}\`?`;
  return `unknown field \`${key}\` in ${where}, expected ${quoteList(known)}`;
}

/**
 * What a schema raises for a key it does not declare where a strict object cannot say so (the
 * fields of a special path depend on its kind, read in a transform): a custom issue with these
 * params, worded by the error map like a strict object's.
 */
export interface UnknownFieldParams {
  unknownField: string;
  knownFields: readonly string[];
}

function unknownFieldParams(params: unknown): UnknownFieldParams | undefined {
  const candidate = params as Partial<UnknownFieldParams> | undefined;
  return typeof candidate?.unknownField === 'string' && Array.isArray(candidate.knownFields)
    ? (candidate as UnknownFieldParams)
    : undefined;
}

function declaredKeys(inst: unknown): string[] {
  const shape = (inst as { _zod?: { def?: { shape?: object } } } | undefined)?._zod?.def?.shape;
  return shape === undefined ? [] : Object.keys(shape);
}

/** The unknown key an issue reports, if it reports one (a strict object's or a custom one). */
function unknownKeyOf(issue: z.core.$ZodIssue): string | undefined {
  if (issue.code === 'unrecognized_keys') return issue.keys[0];
  if (issue.code === 'custom') return unknownFieldParams(issue.params)?.unknownField;
  return undefined;
}

/**
 * The error map passed to every parse: it only words issues that carry no explicit message.
 * `subject` names what is parsed (`fs/walk params`, `sandbox context`) for unknown-field messages.
 */
export function serdeErrorMapFor(subject: string): z.core.$ZodErrorMap {
  return (issue: RawIssue) => serdeMessage(issue, subject);
}

function serdeMessage(issue: RawIssue, subject: string): string | undefined {
  switch (issue.code) {
    case 'unrecognized_keys':
      return unknownFieldMessage(issue.keys[0] ?? '', declaredKeys(issue.inst), subject, issue.path ?? []);
    case 'custom': {
      const unknown = unknownFieldParams(issue.params);
      if (unknown === undefined) return undefined;
      return unknownFieldMessage(unknown.unknownField, unknown.knownFields, subject, issue.path ?? []);
    }
    case 'invalid_type': {
      const field = lastKey(issue.path);
      if (issue.input === undefined && field !== undefined) return `missing field \`${field}\``;
      return invalidTypeMessage(issue.input, EXPECTED[issue.expected] ?? issue.expected);
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
}

/**
 * A failed parse as a typed wire error (`invalid_params`, -32602). An unknown key is reported before
 * anything else, as serde does: a misspelled key usually also leaves its real one missing, and the
 * misspelling is the cause worth naming. `data.field` is the offending field's dotted path.
 */
export function issueToFsError(error: z.ZodError): FsError {
  const issue = error.issues.find((candidate) => unknownKeyOf(candidate) !== undefined) ?? error.issues[0];
  if (!issue) return new FsError('invalid_params', 'invalid params');
  const unknownKey = unknownKeyOf(issue);
  const path = unknownKey === undefined ? issue.path : [...issue.path, unknownKey];
  const field = path.map(String).join('.');
  return new FsError('invalid_params', issue.message, field === '' ? undefined : { field });
}

export function safeParseOptions(subject: string): { error: z.core.$ZodErrorMap; reportInput: true } {
  return { error: serdeErrorMapFor(subject), reportInput: true };
}
