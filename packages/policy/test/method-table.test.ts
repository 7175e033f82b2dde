import { describe, expect, it } from 'vitest';
import {
  carriesRequests,
  descriptorOf,
  innerRequestsOf,
  isWriteClassMethod,
  METHOD_TABLE,
  METHODS,
  type Method,
  requestRunsRipgrep,
} from '../src/method-table.js';
import { requestPathSchema } from '../src/schemas/primitives.js';
import { shapeOf, unwrapped } from './support/schema-shape.js';

describe('the method table', () => {
  it.each(METHODS)('%s lists exactly the path params its schema has', (method: Method) => {
    const pathFields = Object.entries(shapeOf(METHOD_TABLE[method].params()))
      .filter(([, schema]) => unwrapped(schema) === requestPathSchema)
      .map(([field]) => field);
    expect(Object.keys(descriptorOf(method).paths).sort()).toEqual(pathFields.sort());
  });

  it.each(METHODS)('%s names only fields its schemas have', (method: Method) => {
    const descriptor = descriptorOf(method);
    const params = Object.keys(shapeOf(descriptor.params()));
    const result = Object.keys(shapeOf(descriptor.result()));
    if (descriptor.binary?.params !== undefined) expect(params).toContain(descriptor.binary.params);
    if (descriptor.binary?.result !== undefined) expect(result).toContain(descriptor.binary.result);
    if (descriptor.orderedBy !== undefined) expect(params).toContain(descriptor.orderedBy);
  });

  it('every helper method takes a sandbox context (fs/batch one for all its operations); server methods that touch no path do not', () => {
    for (const method of METHODS) {
      const descriptor = descriptorOf(method);
      const takesSandbox = 'sandbox' in shapeOf(descriptor.params());
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

  it('says which methods run ripgrep and which carry requests, and a batch runs ripgrep when one of its operations does', () => {
    expect(METHODS.filter((method) => descriptorOf(method).runsRipgrep === true)).toEqual([
      'fs/search',
      'fs/glob',
    ]);
    expect(METHODS.filter(carriesRequests)).toEqual(['fs/batch']);
    const search = { method: 'fs/search', params: { path: '/w', pattern: 'x' } };
    const read = { method: 'fs/readFile', params: { path: '/w/a' } };
    expect(innerRequestsOf('fs/batch', { operations: [read, search] })).toEqual([read, search]);
    expect(innerRequestsOf('fs/readFile', { path: '/w/a' })).toEqual([]);
    expect(requestRunsRipgrep('fs/batch', { operations: [read, search] })).toBe(true);
    expect(requestRunsRipgrep('fs/batch', { operations: [read] })).toBe(false);
    expect(requestRunsRipgrep('fs/glob', { path: '/w', patterns: ['*'] })).toBe(true);
    expect(requestRunsRipgrep('fs/readFile', { path: '/w/a' })).toBe(false);
  });
});
