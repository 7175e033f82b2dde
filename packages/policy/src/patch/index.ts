export * from './apply-chunks.js';
export * from './parse-patch.js';
export * from './patch-bounds.js';
export * from './patch-targets.js';
export * from './seek-lines.js';
