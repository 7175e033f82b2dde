/** The full policy API (zod schemas included). The helper imports `@fs-sandbox/policy/core` instead. */
export * from './core.js';
export type { SandboxPlan, WritableRoot } from './sandbox-plan.js';
export * from './schemas/index.js';
