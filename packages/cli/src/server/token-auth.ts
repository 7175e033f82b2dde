import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { FsError } from '@fs-sandbox/policy';

/** Shorter tokens are guessable; refuse to start with one rather than protect nothing. */
const MIN_TOKEN_CHARS = 16;

/** Reads the capability token (surrounding whitespace, such as a trailing newline, is not part of it). */
export async function loadToken(file: string): Promise<string> {
  const token = (await readFile(file, 'utf8')).trim();
  if (token.length < MIN_TOKEN_CHARS || /\s/.test(token)) {
    throw new FsError(
      'invalid_request',
      `the token file must hold one token of at least ${MIN_TOKEN_CHARS} characters without spaces`,
    );
  }
  return token;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Checks an `Authorization: Bearer <token>` header. Both sides are hashed first so the comparison
 * runs on equal-length buffers in constant time: neither the token's content nor its length leaks
 * through timing.
 */
export function bearerVerifier(token: string): (header: string | undefined) => boolean {
  const expected = digest(token);
  return (header) => {
    const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
    const presented = match?.[1];
    if (presented === undefined) return false;
    return timingSafeEqual(digest(presented), expected);
  };
}
