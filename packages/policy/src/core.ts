/**
 * The zero-dependency subset of the policy package, for the helper bundle: it must start fast, so
 * nothing reachable from here imports zod or any other package.
 */
export * from './base64.js';
export * from './error-kinds.js';
export * from './host-os.js';
export * from './landlock-abi.js';
export * from './limits.js';
export * from './line-breaks.js';
export * from './native-path.js';
export * from './patch/index.js';
export * from './path-bytes.js';
export * from './path-guard.js';
export * from './path-uri.js';
export * from './permissions/executable-surface.js';
export * from './permissions/git-surface.js';
export * from './permissions/surface-judge.js';
export * from './pseudo-file-systems.js';
export * from './request-bounds.js';
export * from './temp-tag.js';
export * from './terminal-frames.js';
export * from './text-bounds.js';
export * from './tree-progress.js';
