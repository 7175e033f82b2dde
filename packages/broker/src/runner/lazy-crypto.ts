import { createRequire } from 'node:module';

type NodeCrypto = typeof import('node:crypto');

let loaded: NodeCrypto | undefined;

/**
 * node:crypto, loaded when first used: a program that only reads in-process (`fs-sandbox cat
 * --no-sandbox`) never hashes a host read nor tags a temporary file, and loading node's crypto
 * was a measurable part of such a start.
 */
export function nodeCrypto(): NodeCrypto {
  loaded ??= createRequire(import.meta.url)('node:crypto') as NodeCrypto;
  return loaded;
}
