/** The full policy API (zod schemas included). The helper imports `@fs-sandbox/policy/core` instead. */

export * from './app-server/app-server-methods.js';
export * from './app-server/app-server-schemas.js';
export * from './app-server/request-policy.js';
export * from './core.js';
export * from './deep-freeze.js';
export * from './env-allowlist.js';
export * from './helper-params.js';
export * from './method-table.js';
export * from './network/index.js';
export * from './patch/assess-patch.js';
export * from './patch/patch-request.js';
export * from './permissions/index.js';
export * from './platform-roots.js';
export type { SandboxPlan, WritableRoot } from './sandbox-plan.js';
export * from './sandbox-plan-builder.js';
export * from './schemas/index.js';
export * from './widening.js';
