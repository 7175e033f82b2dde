import { closeSync, mkdirSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The bench's files: a workspace (written), a data directory (read), and an empty script for the floor. */
export function createFixture() {
  const base = mkdtempSync(join(tmpdir(), 'fs-sandbox-bench-'));
  const ws = join(base, 'ws');
  const data = join(base, 'data');
  const floorDir = join(base, 'floor');
  for (const dir of [ws, data, floorDir]) mkdirSync(dir);
  const oneKiB = join(ws, 'one-kib.bin');
  writeFileSync(oneKiB, Buffer.alloc(1024, 7));
  const emptyScript = join(floorDir, 'empty.cjs');
  writeFileSync(emptyScript, '');
  return { base, ws, data, oneKiB, written: join(ws, 'written.bin'), emptyScript };
}

/** A file of `bytes` bytes of a counter pattern (every 4 MiB block distinct), written in blocks. */
export function writePatternFile(path, bytes) {
  const block = Buffer.alloc(Math.min(bytes, 4 * 1024 * 1024));
  for (let i = 0; i + 4 <= block.length; i += 4) block.writeUInt32LE((i * 2654435761) >>> 0, i);
  const fd = openSync(path, 'w');
  try {
    for (let offset = 0; offset < bytes; offset += block.length) {
      block.writeUInt32LE(offset / block.length, 0);
      writeSync(fd, block, 0, Math.min(block.length, bytes - offset));
    }
  } finally {
    closeSync(fd);
  }
}

export const uri = (path) => pathToFileURL(path).href;

/** A restricted context: the workspace writable, the data directory readable (a sandboxed call). */
export function sandboxFor(fixture) {
  const entry = (path, access) => ({ path: { type: 'path', path: uri(path) }, access });
  return {
    permissions: {
      type: 'managed',
      file_system: { type: 'restricted', entries: [entry(fixture.ws, 'write'), entry(fixture.data, 'read')] },
      network: 'restricted',
    },
    windowsSandboxLevel: 'disabled',
  };
}
