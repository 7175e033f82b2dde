import { deepFreeze } from '../deep-freeze.js';

/**
 * Parsed sandbox contexts, kept by their JSON text. An agent sends the same context with every
 * request, and parsing it is most of what parsing a request costs (a 1 KiB read's whole params
 * take ~0.8 ms when the broker has been idle for a while, ~0.5 ms of it the context). What is kept
 * under a text is the parse of that text, so a request given a kept one gets what its own parse
 * would have returned:
 *
 * - the caller's value is read once, to make its key, and the schema parses the key's text
 *   (parseParams), never a second read of the value: a getter or a proxy that answers differently
 *   each time cannot have one text's key stand for another value's parse;
 * - only plain data gets a key: plain objects and arrays of own, enumerable data properties;
 *   strings, booleans, null and finite numbers other than -0. Anything whose text would say less
 *   or other than the value (undefined, a function, a Date's toJSON, a boxed string, an accessor, a
 *   class instance, a hole or an extra key in an array) is parsed as it is, every time, like a
 *   context too large to be worth keeping;
 * - what is kept is built from the text, never from the caller's objects, and frozen all the way
 *   down: every request with that text shares it, and no caller's object is frozen.
 */

/** Contexts kept at once; the oldest goes first. A broker usually serves a handful. */
const KEPT_CONTEXTS = 32;
/** A context larger than this (as JSON) is parsed every time: its key would cost what it saves. */
const KEY_MAX_CHARS = 16 * 1024;
/** Values walked at most before the context counts as too large. */
const WALK_MAX_VALUES = 512;

const kept = new Map<string, unknown>();

/** The text a kept context is found by, or null when this value is parsed every time. */
export function contextKeyOf(value: unknown): string | null {
  if (value === null || typeof value !== 'object') return null;
  const budget = { values: WALK_MAX_VALUES };
  if (!isPlainData(value, budget)) return null;
  const key = JSON.stringify(value);
  return key.length <= KEY_MAX_CHARS ? key : null;
}

/** The frozen parse kept for this key, if any. */
export function keptContext(key: string): unknown {
  return kept.get(key);
}

/** Keeps the parse of this key's text; returns it frozen. */
export function keepContext<T>(key: string, parsed: T): T {
  const frozen = deepFreeze(parsed);
  if (kept.size >= KEPT_CONTEXTS) kept.delete(kept.keys().next().value as string);
  kept.set(key, frozen);
  return frozen;
}

function isIndexBelow(key: string, length: number): boolean {
  const index = Number(key);
  return Number.isInteger(index) && index >= 0 && index < length && String(index) === key;
}

function isPlainData(value: unknown, budget: { values: number }): boolean {
  budget.values -= 1;
  if (budget.values < 0) return false;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  const prototype = Object.getPrototypeOf(value);
  const isArray = Array.isArray(value);
  if (isArray ? prototype !== Array.prototype : prototype !== Object.prototype && prototype !== null) {
    return false;
  }
  const keys = Reflect.ownKeys(value);
  const length = isArray ? (value as unknown[]).length : 0;
  // An array's own keys are its indices and `length`; anything more (or a hole) is not plain.
  if (isArray && keys.length !== length + 1) return false;
  for (const key of keys) {
    if (typeof key === 'symbol') return false;
    if (isArray && key === 'length') continue;
    if (isArray && !isIndexBelow(key, length)) return false;
    const descriptor = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
    if (!('value' in descriptor) || descriptor.enumerable !== true) return false;
    if (!isPlainData(descriptor.value, budget)) return false;
  }
  return true;
}
