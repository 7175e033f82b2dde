import { describe, expect, it } from 'vitest';
import { closestName } from '../src/schemas/closest-name.js';

const KNOWN = ['path', 'dataBase64', 'sandbox', 'mode', 'expectedSha256'];

describe('closestName', () => {
  it.each([
    ['sandBox', 'sandbox'],
    ['Sandbox', 'sandbox'],
    ['sand_box', 'sandbox'],
    ['sandbx', 'sandbox'],
    ['sadnbox', 'sandbox'],
    ['dataBase46', 'dataBase64'],
    ['expected_sha256', 'expectedSha256'],
    ['paht', 'path'],
  ])('%s -> %s', (name, expected) => {
    expect(closestName(name, KNOWN)).toBe(expected);
  });
  it.each(['x', 'foo', 'sandboxPolicy', 'recursive', ''])('finds nothing close to %j', (name) => {
    expect(closestName(name, KNOWN)).toBeNull();
  });
  it('prefers the nearest of several candidates', () => {
    expect(closestName('maxDepht', ['maxDepth', 'maxEntries'])).toBe('maxDepth');
    expect(closestName('mode', ['node', 'mode'])).toBe('mode');
  });
});
