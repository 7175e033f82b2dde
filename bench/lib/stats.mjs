/** Order statistics of a list of milliseconds (nearest-rank). */
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  return { n: sorted.length, median: at(0.5), p90: at(0.9), min: sorted[0], max: sorted[sorted.length - 1] };
}

export function ratio(a, b) {
  return b > 0 ? a / b : Number.NaN;
}

/** Fisher-Yates with a seeded generator, so a run's order is reproducible. */
export function seededShuffle(items, seed) {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

/** `items` rotated by `round`, so every subject takes every place in the order in turn. */
export function rotated(items, round) {
  return [...items.slice(round % items.length), ...items.slice(0, round % items.length)];
}
