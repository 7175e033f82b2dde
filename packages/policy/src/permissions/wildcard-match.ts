import { FsError } from '../error-kinds.js';

/**
 * Matching a parsed glob against a path without regular expressions, in time bounded by the
 * lengths of the two (never exponential, whatever the pattern).
 *
 * Why not a regex (picomatch's, minimatch's): V8's engine backtracks, so a pattern such as
 * `**` + `/*a*a*a*a*a*a*a*a*a*a*a*a*b` against a long name of `a`s takes minutes, and the patterns
 * come from models (MCP `search_files`) and from policies (deny globs, matched against every path a
 * request names, every entry a deny-glob scan visits and every entry a helper's tree operation
 * checks). No well-kept JavaScript glob library matches in linear time: they all compile to a
 * backtracking regex; RE2 ports refuse the lookaheads those regexes hold. The syntax here is small
 * (single-character matchers, `*` within a name, `**` over whole segments), for which the classic
 * algorithm is exact and bounded: the pattern is split at its stars into fixed-length chunks, the
 * first chunk anchored at the start, the last at the end, every other one found at its leftmost
 * place after the one before (leftmost is never worse for the chunks after it, so nothing is ever
 * retried). Names match that way character by character, paths segment by segment with `**`
 * as the star; the work is at most (text length x pattern length) steps at each level.
 *
 * Every match also has a step budget (MATCH_STEP_BUDGET), so even a pattern and path built to
 * reach that product answer quickly, with a typed error naming the pattern.
 */

/** One character of a name: a literal, `?`, or a `[...]` class. */
export type CharMatcher =
  | { kind: 'literal'; char: string }
  | { kind: 'any' }
  | { kind: 'class'; test: (char: string) => boolean };

/** A name pattern: `*`-separated runs of single-character matchers. */
export interface NamePattern {
  /** The runs between stars, in order; `starts`/`ends` say whether a star comes first or last. */
  runs: CharMatcher[][];
  starts: boolean;
  ends: boolean;
}

/** A path pattern below its root: `**`-separated runs of name patterns. */
export interface SegmentsPattern {
  runs: NamePattern[][];
  starts: boolean;
  ends: boolean;
}

/** Steps one match may take before it is refused; a realistic pattern takes about the path's length. */
export const MATCH_STEP_BUDGET = 2_000_000;

export class StepBudget {
  private left = MATCH_STEP_BUDGET;
  constructor(private readonly pattern: string) {}

  spend(steps: number): void {
    this.left -= steps;
    if (this.left < 0) {
      throw new FsError(
        'invalid_params',
        `the glob \`${this.pattern}\` takes more than ${MATCH_STEP_BUDGET} steps to match one path; simplify it (fewer \`*\` in a row of literals)`,
      );
    }
  }
}

/** Splits a sequence at its separators (`isStar`), keeping whether it starts or ends with one. */
export function splitAtStars<T, R>(
  items: readonly T[],
  isStar: (item: T) => boolean,
  map: (item: T) => R,
): { runs: R[][]; starts: boolean; ends: boolean } {
  const runs: R[][] = [[]];
  for (const item of items) {
    if (isStar(item)) {
      // Stars side by side are one star.
      if ((runs.at(-1) as R[]).length > 0 || runs.length === 1) runs.push([]);
    } else (runs.at(-1) as R[]).push(map(item));
  }
  const starts = items.length > 0 && isStar(items[0] as T);
  const ends = items.length > 0 && isStar(items.at(-1) as T);
  // A leading star opened an empty first run; the trailing one left an empty last run.
  return {
    runs: runs.filter((run, index) => run.length > 0 || (index === 0 && runs.length === 1)),
    starts,
    ends,
  };
}

/**
 * Whether `text` matches `runs` joined by stars: each run is fixed-length, so the first is anchored
 * at the start (unless a star leads), the last at the end (unless one trails), and every other one
 * is taken at its leftmost place. `same(matcher, item)` compares one element and costs one step.
 */
export function matchRuns<M, T>(
  pattern: { runs: M[][]; starts: boolean; ends: boolean },
  text: readonly T[],
  same: (matcher: M, item: T) => boolean,
  budget: StepBudget,
): boolean {
  const { runs, starts, ends } = pattern;
  const runAt = (run: readonly M[], at: number): boolean => {
    budget.spend(run.length);
    for (let i = 0; i < run.length; i++) if (!same(run[i] as M, text[at + i] as T)) return false;
    return true;
  };
  if (!starts && !ends && runs.length <= 1) {
    const only = runs[0] ?? [];
    return only.length === text.length && runAt(only, 0);
  }
  let from = 0;
  let to = text.length;
  let first = 0;
  let last = runs.length;
  if (!starts) {
    const head = runs[0] as M[];
    if (head.length > text.length || !runAt(head, 0)) return false;
    from = head.length;
    first = 1;
  }
  if (!ends && last > first) {
    const tail = runs[last - 1] as M[];
    if (tail.length > to - from || !runAt(tail, to - tail.length)) return false;
    to -= tail.length;
    last -= 1;
  }
  for (let index = first; index < last; index++) {
    const run = runs[index] as M[];
    let at = from;
    while (at + run.length <= to && !runAt(run, at)) at++;
    if (at + run.length > to) return false;
    from = at + run.length;
  }
  return true;
}

/** One character against a matcher; `fold` lowers both sides for a case-insensitive file system. */
export function sameChar(matcher: CharMatcher, char: string, fold: boolean): boolean {
  if (matcher.kind === 'any') return true;
  if (matcher.kind === 'class') return matcher.test(char);
  return fold ? matcher.char.toLowerCase() === char.toLowerCase() : matcher.char === char;
}

/** Whether the segments of a path below its root (`names`, each as code points) match `pattern`. */
export function matchSegments(
  pattern: SegmentsPattern,
  names: readonly string[][],
  fold: boolean,
  budget: StepBudget,
): boolean {
  return matchRuns(
    pattern,
    names,
    (name, chars) => matchRuns(name, chars, (matcher, char) => sameChar(matcher, char, fold), budget),
    budget,
  );
}
