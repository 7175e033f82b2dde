import type { TreeProgress, TreeProgressPhase } from '@fs-sandbox/policy/core';

/** Where a long tree operation reports how far it got (null: nobody asked). */
export type ProgressSink = (progress: TreeProgress) => void;

export interface ProgressCounter {
  /** One more entry. */
  (): void;
  /** The phase is over: its count is the total the next phase works through. */
  total(): void;
}

/** Counts the entries of one phase of a tree operation into its sink; without a sink it does nothing. */
export function progressCounter(
  sink: ProgressSink | null | undefined,
  phase: Exclude<TreeProgressPhase, 'total'>,
): ProgressCounter {
  let entries = 0;
  const counter = () => {
    entries += 1;
    sink?.({ phase, entries });
  };
  counter.total = () => sink?.({ phase: 'total', entries });
  return counter;
}
