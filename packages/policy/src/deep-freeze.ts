/**
 * Freezes a value and everything it holds: for what the broker builds once and shares between
 * requests (a parsed sandbox context, a prepared sandbox), so no request can alter another's.
 * A frozen object is taken as frozen all the way down; only this function freezes what it shares.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
