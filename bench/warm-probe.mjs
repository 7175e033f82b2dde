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
const times = [];
for (let i = 0; i < 80; i++) {
  await new Promise((r) => setTimeout(r, 120));
  const t = performance.now();
  await b.call('fs/readFile', { path: 'file:///tmp/warm/ws/a.txt', sandbox });
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
console.log('median', times[20].toFixed(2), 'p10', times[4].toFixed(2));
await b.close();
