export * from './core.js';
export type { SandboxPlan, WritableRoot } from './sandbox-plan.js';
