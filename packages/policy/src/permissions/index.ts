export * from './access.js';
export * from './cwd-dependence.js';
export { entryLabel } from './entry-scope.js';
export * from './explain-access.js';
export * from './full-disk.js';
export {
  type DenyGlob,
  type GlobAlternative,
  type GlobPiece,
  type GlobSegment,
  globDeniesPath,
  globLiteralPrefix,
  isAbsoluteGlob,
  parseDenyGlob,
} from './glob-match.js';
export * from './profiles.js';
export * from './resolve-context.js';
