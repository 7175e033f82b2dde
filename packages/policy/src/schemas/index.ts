export * from './fs-params.js';
export * from './fs-results.js';
export { type LazySchema, lazySchema } from './lazy-schema.js';
export * from './method-schemas.js';
export * from './primitives.js';
export * from './process-params.js';
export * from './process-results.js';
export * from './sandbox-context.js';
export { serdeErrorMapFor } from './serde-messages.js';
