/** Types of warm-floor.mjs for the test that runs it. */
import type { LaunchSpec } from '@fs-sandbox/broker';
export class WarmFloor {
  constructor(launch: LaunchSpec, floorDir: string, warmUpFile: string);
  time(path: string): Promise<number>;
  stop(): void;
}
