/** Types of runtimes-table.mjs for the test that checks the table. */
export interface Figures {
  n: number;
  median: number;
  p90: number;
  min: number;
  max: number;
}
export interface RuntimeFigures {
  cold?: Figures;
  warm?: Figures;
  backToBack?: Figures;
  serveCold: Figures;
  serveWarm: Figures;
  serveBackToBack: Figures;
  burstOpsPerSecond: number;
  burstNoPoolOpsPerSecond?: number;
  largeRead64MiB: Figures;
  spareRssMiB?: Figures;
  warmFloor?: Figures;
}
export function formatRuntimes(result: Record<string, RuntimeFigures>): string;
