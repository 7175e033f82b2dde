import { BURST } from './runtimes.mjs';

/**
 * The rows of the runtime table. `peer` picks the reference's figure where it has one: it is
 * measured through its own server only, so it stands in the "via serve" rows; it keeps no pool, so
 * its one burst figure stands in both burst rows, and it has no warm helper to weigh.
 */
const ROWS = [
  ['cold 1 KiB read (library), median ms', (r) => r.cold?.median],
  ['warm 1 KiB read, spaced (library), median ms', (r) => r.warm?.median],
  ['warm floor: same launch, a program that only reads, median ms', (r) => r.warmFloor?.median],
  ['back-to-back 1 KiB read (library), median ms', (r) => r.backToBack?.median],
  ['cold 1 KiB read via serve, median ms', (r) => r.serveCold.median],
  ['warm 1 KiB read, spaced, via serve, median ms', (r) => r.serveWarm.median],
  ['back-to-back 1 KiB read via serve, median ms', (r) => r.serveBackToBack.median],
  [`burst of ${BURST} via serve, ops/s (pool on)`, (r) => r.burstOpsPerSecond],
  [`burst of ${BURST} via serve, ops/s (pool off)`, (r) => r.burstNoPoolOpsPerSecond ?? r.burstOpsPerSecond],
  ['64 MiB read via serve, median ms', (r) => r.largeRead64MiB.median],
  ['peak RSS per warm helper, median MiB', (r) => r.spareRssMiB?.median],
];

/** The targets for Bun against the reference, each `[what, figure, wanted Bun/codex ratio, bound]`. */
const TARGETS = [
  ['cold sandboxed 1 KiB read via serve', (r) => r.serveCold.median, 0.6, 'max'],
  [`burst of ${BURST} via serve (pool on)`, (r) => r.burstOpsPerSecond, 1.5, 'min'],
  ['back-to-back 1 KiB reads via serve', (r) => r.serveBackToBack.median, 0.6, 'max'],
];

/** The bound for a warm sandboxed read through the library, in milliseconds. */
const WARM_READ_TARGET_MS = 1.5;

const cell = (value) => (value === undefined ? '–' : value.toFixed(1));
const quotient = (a, b) => (a === undefined || b === undefined ? '–' : (a / b).toFixed(2));

/**
 * Each figure for every helper runtime, Bun/node, and with the reference (`result.codex`) its
 * column and ours/reference per runtime; then the targets for Bun against the reference.
 */
export function formatRuntimes(result) {
  const { codex, ...helpers } = result;
  const runtimes = Object.keys(helpers);
  const pair = runtimes.length === 2;
  const header = [
    '',
    ...runtimes,
    ...(pair ? [`${runtimes[1]}/${runtimes[0]}`] : []),
    ...(codex === undefined ? [] : ['codex', ...runtimes.map((runtime) => `${runtime}/codex`)]),
  ];
  const lines = ROWS.map(([name, pick]) => {
    const values = runtimes.map((runtime) => pick(helpers[runtime]));
    const line = [name, ...values.map(cell), ...(pair ? [quotient(values[1], values[0])] : [])];
    if (codex === undefined) return line;
    const reference = pick(codex);
    return [...line, cell(reference), ...values.map((value) => quotient(value, reference))];
  });
  const widths = header.map((_, i) => Math.max(...[header, ...lines].map((line) => String(line[i]).length)));
  const table = [header, ...lines]
    .map((line) =>
      line
        .map((text, i) => (i === 0 ? String(text).padEnd(widths[i]) : String(text).padStart(widths[i])))
        .join('  '),
    )
    .join('\n');
  const notes = [];
  const bunWarm = helpers.bun?.warm?.median;
  const bunFloor = helpers.bun?.warmFloor?.median;
  if (bunWarm !== undefined && bunFloor !== undefined) {
    notes.push(
      `target: Bun warm 1 KiB read (library) ≤ ${WARM_READ_TARGET_MS} ms: ${bunWarm.toFixed(2)} ms (${bunWarm <= WARM_READ_TARGET_MS ? 'met' : 'missed'}); its warm floor here ${bunFloor.toFixed(2)} ms, the read ${(bunWarm / bunFloor).toFixed(2)}× that`,
    );
  }
  if (codex === undefined) return [table, ...notes].join('\n');
  notes.unshift(
    'codex: the reference exec-server through its own stdio server; every sandboxed read of it spawns',
    'its helper chain (no pool), so its cold and warm rows are the same spaced read and its one burst',
    'figure stands in both burst rows.',
  );
  if (helpers.bun !== undefined) {
    for (const [what, pick, wanted, bound] of TARGETS) {
      const ratio = pick(helpers.bun) / pick(codex);
      const met = bound === 'max' ? ratio <= wanted : ratio >= wanted;
      notes.push(
        `target: Bun ${what} ${bound === 'max' ? '≤' : '≥'} ${wanted}× codex: ${ratio.toFixed(2)}× (${met ? 'met' : 'missed'})`,
      );
    }
  }
  return `${table}\n${notes.join('\n')}`;
}
