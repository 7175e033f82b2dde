/** Types of fixture.mjs for the tests that drive bench modules. */
import type { SandboxContextInput } from '@fs-sandbox/broker';

export interface BenchFixture {
  base: string;
  ws: string;
  data: string;
  oneKiB: string;
  written: string;
  emptyScript: string;
}
export function createFixture(): BenchFixture;
export function writePatternFile(path: string, bytes: number): void;
export function uri(path: string): string;
export function sandboxFor(fixture: BenchFixture): SandboxContextInput;
