import { cpus, loadavg, release } from 'node:os';

/** Milliseconds as the report prints them: three significant digits, whole above 100. */
export const ms = (value) =>
  value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);

/** What a run records about the machine it ran on (the load says how far to trust the figures). */
export function runMeta(fields) {
  return {
    date: new Date().toISOString(),
    node: process.version,
    kernel: `linux ${release()}`,
    cpus: cpus().length,
    loadBefore: loadavg(),
    ...fields,
  };
}
