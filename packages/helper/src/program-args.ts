/**
 * The helper program's own arguments (after `node helper.cjs`), all optional:
 *   --expect-mounts <absolute path>...   what the sandbox launcher mounted (see freshness.ts)
 *   --warm-up                            started ahead by a warm pool (see warm-up.ts)
 */
export const EXPECT_MOUNTS_FLAG = '--expect-mounts';
export const WARM_UP_FLAG = '--warm-up';

export interface ProgramArgs {
  expectedMounts: string[];
  warmUp: boolean;
}

export function parseProgramArgs(args: readonly string[]): ProgramArgs {
  const parsed: ProgramArgs = { expectedMounts: [], warmUp: false };
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] as string;
    if (arg === WARM_UP_FLAG) {
      parsed.warmUp = true;
    } else if (arg === EXPECT_MOUNTS_FLAG) {
      // Mount points are absolute, so they cannot be mistaken for the next flag.
      while (args[index + 1]?.startsWith('/')) {
        index += 1;
        parsed.expectedMounts.push(args[index] as string);
      }
    } else {
      throw new Error(`usage: helper [${EXPECT_MOUNTS_FLAG} /absolute/path...] [${WARM_UP_FLAG}]`);
    }
  }
  return parsed;
}
