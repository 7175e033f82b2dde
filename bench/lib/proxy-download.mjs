import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { createBroker } from '@fs-sandbox/broker';
import { uri } from './fixture.mjs';
import { machineQuiet } from './settle.mjs';
import { rotated, summarize } from './stats.mjs';

const MiB = 1024 * 1024;

/**
 * What the broker's proxy costs a download: `curl` fetching 10 MiB from an HTTP server on this
 * machine's loopback, in a sandboxed command with the host's network (`network: enabled`, direct)
 * and with an allowlist naming only that server (`network_domains`, every byte through the
 * broker's proxy), interleaved, the order rotated each round. Two figures per sample: the
 * command's whole run (sandbox, the proxy's set-up step, curl) and curl's own transfer time
 * (`%{time_total}`, connect to last byte), which is the proxy's part alone.
 */
export async function measureProxyDownload(fixture, sandbox, rounds, bytes = 10 * MiB) {
  // The server is a process of its own, as a real destination is: in the bench's process it would
  // share the event loop with the broker's proxy.
  const server = spawn(
    process.execPath,
    [
      '-e',
      `const body=Buffer.alloc(${bytes},7);const s=require('http').createServer((q,r)=>{r.writeHead(200,{'content-length':String(body.length)});r.end(body);}).listen(0,'127.0.0.1',()=>console.log(s.address().port));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = await once(server.stdout, 'data');
  const port = Number(String(line).trim());
  const url = `http://127.0.0.1:${port}/ten-mib`;
  const broker = createBroker({ pool: false });
  const permissions = sandbox.permissions;
  const proxied = {
    ...sandbox,
    permissions: { ...permissions, network: 'restricted', network_domains: { allow: [`127.0.0.1:${port}`] } },
  };
  const curl = (...flags) => [
    '/usr/bin/curl',
    ...flags,
    '-sS',
    '--fail',
    '-o',
    '/dev/null',
    '-w',
    '%{size_download} %{time_total}',
    url,
  ];
  // Plain HTTP through the proxy is parsed and forwarded by node's http (http-front.ts); a CONNECT
  // tunnel (curl -p, as every https:// URL goes) is relayed as raw bytes.
  const ways = {
    direct: [{ ...sandbox, permissions: { ...permissions, network: 'enabled' } }, curl()],
    'proxy, plain HTTP': [proxied, curl()],
    'proxy, CONNECT': [proxied, curl('-p')],
  };
  const samples = Object.fromEntries(Object.keys(ways).map((name) => [name, { wall: [], transfer: [] }]));
  const runOnce = async (name) => {
    const started = performance.now();
    const [context, argv] = ways[name];
    const result = await broker.run(argv, { cwd: uri(fixture.ws), sandbox: context, timeoutMs: 120_000 });
    const wall = performance.now() - started;
    const [size, seconds] = result.stdout.trim().split(' ').map(Number);
    if (result.exitCode !== 0 || size !== bytes)
      throw new Error(`curl ${name}: exit ${result.exitCode}, ${size} bytes: ${result.stderr}`);
    return { wall, transfer: seconds * 1000 };
  };
  try {
    for (const name of Object.keys(ways)) await runOnce(name);
    for (let round = 0; round < rounds; round++) {
      for (const name of rotated(Object.keys(ways), round)) {
        await machineQuiet();
        const { wall, transfer } = await runOnce(name);
        samples[name].wall.push(wall);
        samples[name].transfer.push(transfer);
      }
    }
  } finally {
    await broker.close();
    server.kill();
  }
  const summary = Object.fromEntries(
    Object.entries(samples).map(([name, { wall, transfer }]) => [
      name,
      { wall: summarize(wall), transfer: summarize(transfer) },
    ]),
  );
  const direct = summary.direct;
  const ratio = (name) => ({
    transfer: summary[name].transfer.median / direct.transfer.median,
    wall: summary[name].wall.median / direct.wall.median,
  });
  return {
    bytes,
    summary,
    ratios: { 'proxy, plain HTTP': ratio('proxy, plain HTTP'), 'proxy, CONNECT': ratio('proxy, CONNECT') },
  };
}

/** The rows as text: medians per way, and each proxied way's ratio to direct. */
export function formatProxyDownload({ bytes, summary, ratios }) {
  const lines = [`${bytes / MiB} MiB download by curl in a sandboxed command (same rounds)`];
  for (const [name, { wall, transfer }] of Object.entries(summary))
    lines.push(
      `  ${name.padEnd(17)} transfer median ${transfer.median.toFixed(1)} ms (p90 ${transfer.p90.toFixed(1)}), whole command ${wall.median.toFixed(1)} ms (p90 ${wall.p90.toFixed(1)})`,
    );
  for (const [name, ratio] of Object.entries(ratios))
    lines.push(
      `  ${name} / direct: transfer ${ratio.transfer.toFixed(2)}×, whole command ${ratio.wall.toFixed(2)}×`,
    );
  return lines.join('\n');
}
