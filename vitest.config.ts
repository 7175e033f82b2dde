import { existsSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';
import {
  ALONE_SUITES as ALONE,
  LANDLOCK_SUITES,
  RUNTIME_SENSITIVE_SUITES,
} from './test/support/suite-plan.js';

/**
 * Workers per group. The end-to-end files spend most of their time waiting on the processes they
 * start (the CLI, bwrap, helpers, servers), so on this 2-core machine class two files at once use the
 * CPU that one leaves idle; more than two starts to slow each file down by contention. Every
 * project of one group must state the same count.
 */
const WORKERS = 2;

/** Where the Bun helper is built, the default runtime is Bun: the node leg runs the runtime-sensitive suites again. */
const BUN_HELPER_BUILT = existsSync(
  new URL(`./packages/helper-${process.platform}-${process.arch}/bin/helper-bun`, import.meta.url),
);

const e2e = {
  testTimeout: 120_000,
  hookTimeout: 120_000,
  maxWorkers: WORKERS,
};

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: {
    projects: [
      {
        extends: true as const,
        test: {
          name: 'unit',
          // test/static: checks of the repository's own text (docs, declarations, dependencies) that start no sandbox.
          include: ['packages/*/test/**/*.test.ts', 'test/static/**/*.test.ts'],
          testTimeout: 30_000,
          maxWorkers: WORKERS,
        },
      },
      {
        extends: true as const,
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          // Setting `exclude` replaces vitest's default one (node_modules, .git, …): keep it.
          exclude: [...configDefaults.exclude, 'test/static/**', ...Object.keys(ALONE)],
          ...e2e,
        },
      },
      ...(BUN_HELPER_BUILT
        ? [
            {
              extends: true as const,
              test: {
                name: 'e2e-node',
                include: Object.keys(RUNTIME_SENSITIVE_SUITES).filter((file) => !(file in ALONE)),
                env: { FS_SANDBOX_HELPER_RUNTIME: 'node', FS_SANDBOX_TEST_SECOND_LEG: '1' },
                ...e2e,
              },
            },
            // The Landlock launcher is the Bun helper: without it there is no Landlock backend.
            {
              extends: true as const,
              test: {
                name: 'e2e-landlock',
                include: Object.keys(LANDLOCK_SUITES),
                env: { FS_SANDBOX_TEST_NO_USERNS: '1', FS_SANDBOX_TEST_SECOND_LEG: '1' },
                ...e2e,
              },
            },
          ]
        : []),
      ...(Object.keys(ALONE).length > 0
        ? [
            {
              extends: true as const,
              test: {
                name: 'e2e-alone',
                include: Object.keys(ALONE),
                ...e2e,
                maxWorkers: 1,
                sequence: { groupOrder: 1 },
              },
            },
          ]
        : []),
    ],
  },
});
