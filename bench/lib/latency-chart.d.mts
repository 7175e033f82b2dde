/** Types of latency-chart.mjs for the test that checks its layout. */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}
export interface ChartText {
  value: string;
  box: Box;
}
export interface LatencyChart {
  width: number;
  height: number;
  texts: ChartText[];
  bars: Box[];
}
export interface ChartSummary {
  floor: number;
  latency: Record<string, { median: number; p90: number }>;
}
export function layoutLatencyChart(summary: ChartSummary): LatencyChart;
export function latencySvg(summary: ChartSummary): string;
