import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';

/** The README's Python example, run as written (only the command that starts the CLI is spelled out). */
const ROOT = join(import.meta.dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

beforeAll(() => {
  ensureBuilt();
});

describe('README JSON-RPC notes', () => {
  const python = spawnSync('python3', ['--version']);
  it.skipIf(python.status !== 0)(
    'the Python example runs against serve --listen stdio (needs python3 on the machine)',
    () => {
      const example = /```python\n([\s\S]*?)```/.exec(README)?.[1];
      expect(example).toBeDefined();
      const bin = join(ROOT, 'packages/broker/bin/fs-sandbox.js');
      const script = (example ?? '').replace('["fs-sandbox", ', `["node", ${JSON.stringify(bin)}, `);
      expect(script).not.toBe(example);
      const run = spawnSync('python3', ['-c', script], { encoding: 'utf8', timeout: 30_000 });
      expect(run.status, run.stderr).toBe(0);
      const [initialize, , metadata] = run.stdout.split('\n');
      const reply = JSON.parse(initialize ?? '');
      // As the README says: no "jsonrpc" in replies, capabilities inside environmentInfo.
      expect(reply).not.toHaveProperty('jsonrpc');
      expect(reply.result).not.toHaveProperty('capabilities');
      expect(reply.result.environmentInfo.capabilities).toMatchObject({ sandboxedFileStreaming: true });
      expect(metadata).toMatch(/^\{'id': 2, 'result': \{'isDirectory': False, 'isFile': True/);
    },
  );

  it('states the framing, where capabilities sit and that replies omit jsonrpc', () => {
    expect(README).toContain('no\n`Content-Length` headers');
    expect(README).toContain('sit inside `environmentInfo`');
    expect(README).toContain('Replies omit `"jsonrpc": "2.0"`');
  });
});
