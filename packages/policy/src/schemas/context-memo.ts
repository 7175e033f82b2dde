import { deepFreeze } from '../deep-freeze.js';

/**
 * Parsed sandbox contexts, kept by their JSON text. An agent sends the same context with every
 * request, and parsing it is most of what parsing a request costs (a 1 KiB read's whole params
 * take ~0.8 ms when the broker has been idle for a while, ~0.5 ms of it the context). A context is
 * kept only after it parsed, and only when its JSON text determines its parse exactly, so a request
 * given a kept one gets what its own parse would have returned:
 *
 * - only plain data counts: plain objects and arrays of own, enumerable data properties; strings,
 *   booleans, null and finite numbers other than -0. Anything JSON.stringify would render as
 *   something else (undefined, a function, a Date's toJSON, a boxed string, an accessor, a class
 *   instance, a sparse array) is parsed every time, like a context too large to be worth keeping;
 * - what is returned is frozen, all the way down: every request with that text shares it.
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

/** Keeps a context that just parsed from the value with this key; returns it frozen. */
export function keepContext<T>(key: string, parsed: T): T {
  const frozen = deepFreeze(parsed);
  if (kept.size >= KEPT_CONTEXTS) kept.delete(kept.keys().next().value as string);
  kept.set(key, frozen);
  return frozen;
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
  // An array's own keys are its indices and `length`; anything more (or a hole) is not plain.
  if (isArray && keys.length !== (value as unknown[]).length + 1) return false;
  for (const key of keys) {
    if (typeof key === 'symbol') return false;
    if (isArray && key === 'length') continue;
    const descriptor = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
    if (!('value' in descriptor) || descriptor.enumerable !== true) return false;
    if (!isPlainData(descriptor.value, budget)) return false;
  }
  return true;
}
