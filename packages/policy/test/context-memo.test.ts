import { describe, expect, it } from 'vitest';
import { METHOD_TABLE } from '../src/method-table.js';
import { contextKeyOf } from '../src/schemas/context-memo.js';
import { parseParams } from '../src/schemas/index.js';
import { sandboxFieldSchema } from '../src/schemas/sandbox-context.js';
import { thrownFsError } from './support/thrown.js';

let serial = 0;
/** A context no other test has parsed (the memo is per process). */
function freshContext(entries: unknown[] = []): Record<string, unknown> {
  serial += 1;
  return {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [{ path: { type: 'path', path: `file:///memo-${serial}` }, access: 'write' }, ...entries],
      },
      network: 'restricted',
    },
  };
}

const contextOf = (sandbox: unknown) =>
  (parseParams('fs/readFile', { path: 'file:///memo/a', sandbox }) as { sandbox: unknown }).sandbox;

const refusal = thrownFsError;

describe('parsed sandbox contexts kept by their JSON text', () => {
  it('parses a context once: the same text gets the same frozen parse, equal to a parse of its own', () => {
    const sandbox = freshContext();
    const first = contextOf(structuredClone(sandbox));
    const second = contextOf(structuredClone(sandbox));
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    // What a parse that keeps nothing returns: an accessor makes the context parse on its own.
    const unkept = structuredClone(sandbox);
    Object.defineProperty(unkept, 'windowsSandboxLevel', { get: () => 'disabled', enumerable: true });
    const own = contextOf(unkept);
    expect(own).not.toBe(first);
    expect(own).toEqual(first);
    const permissions = (first as { permissions: { file_system: { entries: unknown[] } } }).permissions;
    expect(() => permissions.file_system.entries.push({})).toThrow(TypeError);
  });

  it('still checks the rest of the params against a kept context', () => {
    const sandbox = freshContext();
    contextOf(sandbox);
    const error = refusal(() => parseParams('fs/readFile', { path: 'file:///memo/a', sandbox, pth: 1 }));
    expect(error.kind).toBe('invalid_params');
    expect(error.message).toContain('unknown field `pth`');
  });

  it('never lets a value its text would pass for in: a key dropped as undefined, a boxed string', () => {
    // Each has the text of a context that parsed and was kept; parsed on its own, each is refused.
    const special = { path: { type: 'special', value: { kind: 'root' } }, access: 'read' };
    const sandbox = freshContext([special]);
    contextOf(structuredClone(sandbox));
    const withUndefinedField = structuredClone(sandbox) as ReturnType<typeof freshContext>;
    const entries = (withUndefinedField.permissions as { file_system: { entries: Array<{ path: object }> } })
      .file_system.entries;
    (entries[1] as { path: { value: Record<string, unknown> } }).path.value.subpth = undefined;
    expect(JSON.stringify(withUndefinedField)).toBe(JSON.stringify(sandbox));
    expect(refusal(() => contextOf(withUndefinedField)).message).toContain('subpth');

    const boxed = structuredClone(sandbox) as ReturnType<typeof freshContext>;
    const first = (boxed.permissions as { file_system: { entries: Array<{ path: { path: unknown } }> } })
      .file_system.entries[0] as { path: { path: unknown } };
    // A String object renders as its text, but is not a string.
    first.path.path = Object(first.path.path);
    expect(JSON.stringify(boxed)).toBe(JSON.stringify(sandbox));
    expect(refusal(() => contextOf(boxed)).kind).toBe('invalid_params');
  });

  it('applies to every method that takes a context: each declares the one shared context field', () => {
    const withContext = Object.entries(METHOD_TABLE).filter(
      ([, descriptor]) =>
        (descriptor.params as { shape?: { sandbox?: unknown } }).shape?.sandbox !== undefined,
    );
    expect(withContext.map(([method]) => method)).toContain('fs/readFile');
    expect(withContext.map(([method]) => method)).toContain('process/start');
    for (const [method, descriptor] of withContext) {
      const field = (descriptor.params as { shape: { sandbox: unknown } }).shape.sandbox;
      expect(field, method).toBe(sandboxFieldSchema);
    }
  });

  it('keys only plain data, and nothing too large', () => {
    expect(contextKeyOf({ a: [1, 'x', null, true] })).toBe('{"a":[1,"x",null,true]}');
    expect(contextKeyOf({ a: -0 })).toBeNull();
    expect(contextKeyOf({ a: Number.NaN })).toBeNull();
    expect(contextKeyOf({ a: new Date(0) })).toBeNull();
    expect(contextKeyOf({ a: undefined })).toBeNull();
    // biome-ignore lint/suspicious/noSparseArray: a hole is what is tested
    expect(contextKeyOf({ a: [1, , 3] })).toBeNull();
    expect(contextKeyOf(Object.assign([1], { extra: 2 }))).toBeNull();
    expect(contextKeyOf(new (class Box {})())).toBeNull();
    expect(contextKeyOf({ [Symbol('s')]: 1 })).toBeNull();
    expect(contextKeyOf({ a: 'x'.repeat(20_000) })).toBeNull();
    expect(contextKeyOf({ a: Array.from({ length: 600 }, () => 0) })).toBeNull();
    expect(contextKeyOf('text')).toBeNull();
  });
});
