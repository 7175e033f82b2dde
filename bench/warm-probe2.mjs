import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createBroker } from '@fs-sandbox/broker';
import { sandboxFor } from './lib/fixture.mjs';

mkdirSync('/tmp/warm/ws', { recursive: true });
writeFileSync('/tmp/warm/ws/a.txt', 'x'.repeat(1024));
const sandbox = sandboxFor({ ws: '/tmp/warm/ws', data: '/tmp/warm/ws' });
const b = createBroker({
  pool: { size: 2, perKey: 2, idleMs: 600000 },
  helperRuntime: process.argv[2] ?? 'bun',
});
const rows = [];
for (let i = 0; i < 30; i++) {
  await new Promise((r) => setTimeout(r, 200));
  await b.call('fs/readFile', { path: 'file:///tmp/warm/ws/a.txt', sandbox });
  const T = globalThis.__T;
  const end = performance.now();
  rows.push([T[1] - T[0], T[2] - T[1], T[3] - T[2], end - T[3], end - T[0]]);
}
const med = (k) =>
  rows
    .map((r) => r[k])
    .sort((a, b) => a - b)[15]
    .toFixed(2);
console.log(
  'prepare->take',
  med(0),
  'freshness',
  med(1),
  'write->firstStdout',
  med(2),
  'stdout->resolve',
  med(3),
  'total',
  med(4),
);
await b.close();
