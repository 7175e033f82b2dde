import { join } from 'node:path';
import { uri, writePatternFile } from './fixture.mjs';
import { ServeClient } from './server-client.mjs';
import { machineQuiet, spareReady } from './settle.mjs';

/**
 * fs/readFile of a large file through one `fs-sandbox serve` process (its default warm pool), in
 * process (no sandbox) and sandboxed, interleaved. The reply is counted, not decoded, so the
 * client costs both variants the same little.
 */
export async function measureLargeReads(fixture, sandbox, cliBin, bytes, rounds) {
  const file = join(fixture.data, `large-${bytes}.bin`);
  writePatternFile(file, bytes);
  const server = new ServeClient(cliBin);
  await server.handshake();
  const expectedBytes = replyBytes(bytes);
  const samples = { 'in-process': [], sandboxed: [] };
  let id = 0;
  const read = async (mode) => {
    id += 1;
    const params = mode === 'sandboxed' ? { path: uri(file), sandbox } : { path: uri(file) };
    const { ms, reply } = await server.time({ id, method: 'fs/readFile', params });
    if (reply.bytes !== expectedBytes(id) || !reply.head.startsWith(`{"id":${id},"result":{"dataBase64":"`)) {
      throw new Error(`unexpected reply to a ${bytes}-byte read: ${reply.head.slice(0, 200)}`);
    }
    return ms;
  };
  // The first of each: page cache, the server's first sandboxed call, the pool's first spares.
  await read('in-process');
  await read('sandboxed');
  for (let round = 0; round < rounds; round++) {
    for (const mode of round % 2 === 0 ? ['in-process', 'sandboxed'] : ['sandboxed', 'in-process']) {
      await spareReady(fixture.data, 2);
      await machineQuiet();
      samples[mode].push(await read(mode));
    }
  }
  const peakResidentBytes = server.peakResidentBytes();
  await server.stop();
  return { samples, peakResidentBytes };
}

/** One sandboxed read of `bytes` through a fresh server (pool off): its time and the server's peak memory. */
export async function measureOneHugeRead(fixture, sandbox, cliBin, bytes) {
  const file = join(fixture.data, `huge-${bytes}.bin`);
  writePatternFile(file, bytes);
  const server = new ServeClient(cliBin, ['--pool-size', '0']);
  await server.handshake();
  const before = server.peakResidentBytes();
  const { ms, reply } = await server.time({
    id: 1,
    method: 'fs/readFile',
    params: { path: uri(file), sandbox },
  });
  if (reply.bytes !== replyBytes(bytes)(1))
    throw new Error(`unexpected reply to the huge read: ${reply.head}`);
  const peakResidentBytes = server.peakResidentBytes();
  await server.stop();
  return { ms, peakResidentBytes, idleResidentBytes: before };
}

/** Length of `{"id":N,"result":{"dataBase64":"<base64>"}}` for a file of `bytes` bytes. */
function replyBytes(bytes) {
  const base64 = 4 * Math.ceil(bytes / 3);
  return (id) => `{"id":${id},"result":{"dataBase64":""}}`.length + base64;
}
