/**
 * The known name a misspelled one most likely meant, or null when none is close. Case, `_` and `-`
 * are ignored first (`Sandbox`, `max_depth`), then a small edit distance is allowed, scaled to the
 * name's length so that a short unrelated name is not "corrected" into a known one.
 */
export function closestName(name: string, known: readonly string[]): string | null {
  const folded = fold(name);
  let best: string | null = null;
  let bestDistance = Math.max(1, Math.floor(folded.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(folded, fold(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function fold(name: string): string {
  return name.toLowerCase().replace(/[_-]/g, '');
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps cost 1. */
function editDistance(a: string, b: string): number {
  const width = b.length + 1;
  const table = new Array<number>((a.length + 1) * width).fill(0);
  const at = (i: number, j: number): number => table[i * width + j] ?? 0;
  for (let i = 0; i <= a.length; i++) table[i * width] = i;
  for (let j = 0; j <= b.length; j++) table[j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        distance = Math.min(distance, at(i - 2, j - 2) + 1);
      }
      table[i * width + j] = distance;
    }
  }
  return at(a.length, b.length);
}
