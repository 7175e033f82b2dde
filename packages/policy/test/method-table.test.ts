import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { descriptorOf, isWriteClassMethod, METHOD_TABLE, METHODS, type Method } from '../src/method-table.js';
import { requestPathSchema } from '../src/schemas/primitives.js';

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));
const BEGIN = '<!-- method table: generated from packages/policy/src/method-table.ts -->';
const END = '<!-- end of method table -->';

/** An object schema's fields; a discriminated union's are those of all its options. */
function shapeOf(schema: z.ZodType): Record<string, z.ZodType> {
  const options = (schema as unknown as { options?: z.ZodType[] }).options;
  if (Array.isArray(options)) return Object.assign({}, ...options.map(shapeOf));
  return (schema as unknown as { shape: Record<string, z.ZodType> }).shape;
}

/** The schema under `.nullish()` / `.optional()` / `.nullable()` wrappers. */
function unwrapped(schema: z.ZodType): z.ZodType {
  const inner = (schema as unknown as { unwrap?: () => z.ZodType }).unwrap;
  return typeof inner === 'function' ? unwrapped(inner.call(schema)) : schema;
}

function isOptional(schema: z.ZodType): boolean {
  return schema.safeParse(undefined).success;
}

const ACCESS_WORD = { read: 'reads', write: 'writes', create: 'creates', remove: 'removes' } as const;

/** The README's method table, as the method table says it (run with UPDATE_README=1 to rewrite it). */
function renderTable(): string {
  const rows = METHODS.filter((method) => descriptorOf(method).exposed).map((method) => {
    const descriptor = descriptorOf(method);
    const params = Object.entries(shapeOf(descriptor.params))
      .map(([key, schema]) => `${key}${isOptional(schema) ? '?' : ''}`)
      .join(', ');
    const result = `{${Object.keys(shapeOf(descriptor.result)).join(', ')}}`;
    const paths = Object.entries(descriptor.paths)
      .map(([field, access]) => `${ACCESS_WORD[access]} \`${field}\``)
      .join(', ');
    const where = descriptor.answeredBy === 'helper' ? 'helper' : 'server';
    return `| \`${method}\` | \`${params}\` | \`${result}\` | ${where} | ${paths || '—'} | ${descriptor.summary} |`;
  });
  return [
    BEGIN,
    '| method | params | result | answered by | paths | what it does |',
    '|---|---|---|---|---|---|',
    ...rows,
    END,
  ].join('\n');
}

describe('the method table', () => {
  it.each(METHODS)('%s lists exactly the path params its schema has', (method: Method) => {
    const pathFields = Object.entries(shapeOf(METHOD_TABLE[method].params))
      .filter(([, schema]) => unwrapped(schema) === requestPathSchema)
      .map(([field]) => field);
    expect(Object.keys(descriptorOf(method).paths).sort()).toEqual(pathFields.sort());
  });

  it.each(METHODS)('%s names only fields its schemas have', (method: Method) => {
    const descriptor = descriptorOf(method);
    const params = Object.keys(shapeOf(descriptor.params));
    const result = Object.keys(shapeOf(descriptor.result));
    if (descriptor.binary?.params !== undefined) expect(params).toContain(descriptor.binary.params);
    if (descriptor.binary?.result !== undefined) expect(result).toContain(descriptor.binary.result);
    if (descriptor.orderedBy !== undefined) expect(params).toContain(descriptor.orderedBy);
  });

  it('every helper method takes a sandbox context (fs/batch one for all its operations); server methods that touch no path do not', () => {
    for (const method of METHODS) {
      const descriptor = descriptorOf(method);
      const takesSandbox = 'sandbox' in shapeOf(descriptor.params);
      if (descriptor.answeredBy === 'helper') expect(takesSandbox, method).toBe(true);
      if (descriptor.answeredBy === 'server' && Object.keys(descriptor.paths).length === 0)
        expect(takesSandbox, method).toBe(false);
    }
  });

  it('counts as write class every helper method but those that only read (an untrusted broker runs only these)', () => {
    const readOnly = METHODS.filter(
      (method) => descriptorOf(method).answeredBy === 'helper' && !isWriteClassMethod(method),
    );
    // fs/batch is judged by its operations; fs/applyPatch reads its `cwd` but writes the patch's files.
    expect(readOnly.sort()).toEqual(
      [
        'fs/batch',
        'fs/canonicalize',
        'fs/getMetadata',
        'fs/glob',
        'fs/openForRead',
        'fs/readDirectory',
        'fs/readFile',
        'fs/readRange',
        'fs/readTextFile',
        'fs/search',
        'fs/walk',
      ].sort(),
    );
  });

  it('is the table the README shows', () => {
    const readme = readFileSync(README, 'utf8');
    const start = readme.indexOf(BEGIN);
    const end = readme.indexOf(END);
    const expected = renderTable();
    if (process.env.UPDATE_README === '1' && start !== -1 && end !== -1) {
      writeFileSync(README, `${readme.slice(0, start)}${expected}${readme.slice(end + END.length)}`);
      return;
    }
    expect(start, 'README.md has no generated method table').toBeGreaterThan(-1);
    expect(readme.slice(start, end + END.length)).toBe(expected);
  });
});
