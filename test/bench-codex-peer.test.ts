import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertSandboxes, locateCodex, type PeerServer, startCodex } from '../bench/lib/codex-peer.mjs';
import { type BenchFixture, createFixture, sandboxFor } from '../bench/lib/fixture.mjs';
import { formatRuntimes, type RuntimeFigures } from '../bench/lib/runtimes-table.mjs';
import { codexBinary } from './support/codex-binary.js';

/**
 * `pnpm bench --peer codex`: the table's codex columns and targets, and the guard that keeps the
 * bench from comparing our sandboxed reads with an unsandboxed peer, tried against the real
 * reference exec-server under real bwrap.
 */

const figures = (median: number) => ({ n: 1, median, p90: median, min: median, max: median });

function ours(serveCold: number, burst: number, serveBackToBack: number): RuntimeFigures {
  return {
    cold: figures(serveCold - 2),
    warm: figures(6),
    backToBack: figures(20),
    serveCold: figures(serveCold),
    serveWarm: figures(10),
    serveBackToBack: figures(serveBackToBack),
    burstOpsPerSecond: burst,
    burstNoPoolOpsPerSecond: burst + 1,
    largeRead64MiB: figures(800),
    spareRssMiB: figures(40),
    warmFloor: figures(1.8),
  };
}

const CODEX_FIGURES: RuntimeFigures = {
  serveCold: figures(60),
  serveWarm: figures(62),
  serveBackToBack: figures(64),
  burstOpsPerSecond: 16,
  largeRead64MiB: figures(2000),
};

const row = (table: string, name: string) =>
  (table.split('\n').find((line) => line.startsWith(name)) ?? '').slice(name.length).trim().split(/\s+/);

describe('the runtime table with the reference', () => {
  it('adds codex and ours/codex columns where the reference has a figure, and the targets for Bun', () => {
    const table = formatRuntimes({ node: ours(80, 20, 50), bun: ours(30, 20, 40), codex: CODEX_FIGURES });
    expect(table.split('\n')[0]?.trim().split(/\s+/)).toEqual([
      'node',
      'bun',
      'bun/node',
      'codex',
      'node/codex',
      'bun/codex',
    ]);
    expect(row(table, 'cold 1 KiB read via serve, median ms')).toEqual([
      '80.0',
      '30.0',
      '0.38',
      '60.0',
      '1.33',
      '0.50',
    ]);
    // The reference is measured through its server only: no library row, no warm helper to weigh.
    expect(row(table, 'cold 1 KiB read (library), median ms').slice(3)).toEqual(['–', '–', '–']);
    expect(row(table, 'peak RSS per warm helper, median MiB').slice(3)).toEqual(['–', '–', '–']);
    // It has no pool: its one burst figure is the reference for both burst rows.
    expect(row(table, 'burst of 32 via serve, ops/s (pool off)').slice(3)).toEqual(['16.0', '1.31', '1.31']);
    expect(table).toContain('target: Bun cold sandboxed 1 KiB read via serve ≤ 0.6× codex: 0.50× (met)');
    expect(table).toContain('target: Bun burst of 32 via serve (pool on) ≥ 1.5× codex: 1.25× (missed)');
    expect(table).toContain('target: Bun back-to-back 1 KiB reads via serve ≤ 0.6× codex: 0.63× (missed)');
    expect(row(table, 'warm floor: same launch, a program that only reads, median ms').slice(0, 3)).toEqual([
      '1.8',
      '1.8',
      '1.00',
    ]);
    expect(table).toContain(
      'target: Bun warm 1 KiB read (library) ≤ 1.5 ms: 6.00 ms (missed); its warm floor here 1.80 ms, the read 3.33× that',
    );
  });

  it('has neither codex columns nor targets without the reference', () => {
    const table = formatRuntimes({ node: ours(80, 20, 50), bun: ours(30, 40, 20) });
    expect(table).not.toContain('codex');
    expect(table.split('\n')[0]?.trim().split(/\s+/)).toEqual(['node', 'bun', 'bun/node']);
    // The warm read's bound is absolute: it is shown with or without the reference.
    expect(table).toContain('target: Bun warm 1 KiB read (library) ≤ 1.5 ms: 6.00 ms (missed)');
  });
});

const CODEX = codexBinary();

describe.skipIf(CODEX === null)(
  CODEX === null
    ? `the bench's sandbox guard against the reference: SKIPPED, @openai/codex installed no binary for ${process.platform}-${process.arch}`
    : "the bench's sandbox guard against the reference Codex exec-server (real bwrap)",
  () => {
    let fixture: BenchFixture;
    let server: PeerServer;

    beforeAll(async () => {
      fixture = createFixture();
      server = await startCodex(locateCodex({ ...process.env, FS_SANDBOX_BENCH_CODEX: CODEX as string }));
    });

    afterAll(async () => {
      await server?.stop();
      rmSync(fixture.base, { recursive: true, force: true });
    });

    it("passes when the reference refuses a file outside the bench sandbox's roots and reads one inside", async () => {
      await expect(
        assertSandboxes(server, sandboxFor(fixture), fixture.oneKiB, fixture.emptyScript),
      ).resolves.toBeUndefined();
    });

    it.each([
      ['no sandbox', null],
      [
        'a disabled permission profile',
        { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' },
      ],
      [
        'a sandbox that grants nothing (the inside read fails too)',
        {
          permissions: {
            type: 'managed',
            file_system: { type: 'restricted', entries: [] },
            network: 'restricted',
          },
          windowsSandboxLevel: 'disabled',
        },
      ],
    ])('stops the bench for %s', async (_name, sandbox) => {
      await expect(assertSandboxes(server, sandbox, fixture.oneKiB, fixture.emptyScript)).rejects.toThrow(
        /the reference does not sandbox reads as asked/,
      );
    });
  },
);
