import { describe, expect, it } from 'vitest';
import { METHOD_TABLE } from '../src/method-table.js';
import { contextKeyOf } from '../src/schemas/context-memo.js';
import { parseParams, parseSandboxContext } from '../src/schemas/index.js';
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

  it('keeps under a text only the parse of that text: a value that reads differently each time cannot plant another', () => {
    const narrow = freshContext();
    const wide = freshContext([{ path: { type: 'path', path: 'file:///memo-secret' }, access: 'write' }]);
    const narrowParse = parseSandboxContext(structuredClone(narrow));
    // A getter: the narrow context when read for the key, the wide one on every other read.
    let reads = 0;
    const params = { path: 'file:///memo/a' } as Record<string, unknown>;
    Object.defineProperty(params, 'sandbox', {
      enumerable: true,
      get: () => {
        reads += 1;
        return structuredClone(reads === 2 ? narrow : wide);
      },
    });
    const own = (parseParams('fs/readFile', params) as { sandbox: unknown }).sandbox;
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(own).toEqual(narrowParse);
    expect(contextOf(structuredClone(narrow))).toEqual(narrowParse);

    // A proxy that passes every plain-data check, then answers the wide context's permissions.
    const proxied = freshContext();
    const proxiedParse = parseSandboxContext(structuredClone(proxied));
    let gets = 0;
    const permissionsOf = (target: Record<string, unknown>) => {
      gets += 1;
      return gets <= 1 ? target.permissions : wide.permissions;
    };
    const proxy = new Proxy(structuredClone(proxied), {
      get: (target, key) => (key === 'permissions' ? permissionsOf(target) : Reflect.get(target, key)),
    });
    contextOf(proxy);
    expect(contextOf(structuredClone(proxied))).toEqual(proxiedParse);
  });

  it("never freezes the caller's objects (an unknown special kind keeps its raw fields)", () => {
    const options = { level: 1 };
    const sandbox = freshContext([
      { path: { type: 'special', value: { kind: 'from_a_newer_client', options } }, access: 'read' },
    ]);
    const text = JSON.stringify(sandbox);
    contextOf(sandbox);
    expect(Object.isFrozen(options)).toBe(false);
    expect(Object.isFrozen(sandbox)).toBe(false);
    // What the caller does with its objects afterwards does not reach the context kept for the text.
    options.level = 2;
    const kept = JSON.stringify(contextOf(JSON.parse(text)));
    expect(kept).toContain('"level":1');
    expect(kept).not.toContain('"level":2');
  });

  it('applies to every method that takes a context: each declares the one shared context field', () => {
    const withContext = Object.entries(METHOD_TABLE).filter(
      ([, descriptor]) =>
        (descriptor.params() as { shape?: { sandbox?: unknown } }).shape?.sandbox !== undefined,
    );
    expect(withContext.map(([method]) => method)).toContain('fs/readFile');
    expect(withContext.map(([method]) => method)).toContain('process/start');
    for (const [method, descriptor] of withContext) {
      const field = (descriptor.params() as unknown as { shape: { sandbox: unknown } }).shape.sandbox;
      expect(field, method).toBe(sandboxFieldSchema());
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
    // biome-ignore lint/suspicious/noSparseArray: a hole made up for by an extra key
    expect(contextKeyOf(Object.assign([, 'x'], { extra: 2 }))).toBeNull();
    expect(contextKeyOf(new (class Box {})())).toBeNull();
    expect(contextKeyOf({ [Symbol('s')]: 1 })).toBeNull();
    expect(contextKeyOf({ a: 'x'.repeat(20_000) })).toBeNull();
    expect(contextKeyOf({ a: Array.from({ length: 600 }, () => 0) })).toBeNull();
    expect(contextKeyOf('text')).toBeNull();
  });
});
