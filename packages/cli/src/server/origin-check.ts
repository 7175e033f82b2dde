import type { IncomingHttpHeaders } from 'node:http';
import { FsError } from '@fs-sandbox/policy';

/**
 * `--allow-origin` takes an origin as browsers send it (`scheme://host[:port]`, no path), so that
 * the comparison can be exact. `null` is refused: every sandboxed iframe and file page sends it,
 * whatever site it comes from.
 */
export function parseAllowedOrigin(text: string): string {
  let origin: string;
  try {
    origin = new URL(text).origin;
  } catch {
    origin = 'null';
  }
  if (origin === 'null' || origin !== text) {
    throw new FsError(
      'invalid_params',
      `--allow-origin must be an origin such as \`https://app.example\` or \`http://localhost:3000\`, got \`${text}\``,
    );
  }
  return origin;
}

/**
 * Whether an upgrade may proceed as far as its Origin goes. Browsers always send an Origin with a
 * WebSocket handshake (RFC 6455 §4.1; `Sec-WebSocket-Origin` in the draft version 8 that ws still
 * accepts) and native clients do not, so a handshake without one is not a page in a browser, and
 * one with an Origin proceeds only if it names an allowed origin exactly. The token alone does not
 * suffice: a page that learnt it must still not drive the server from an arbitrary site.
 */
export function originVerifier(allowed: readonly string[]): (headers: IncomingHttpHeaders) => boolean {
  const origins = new Set(allowed);
  return (headers) => {
    for (const name of ['origin', 'sec-websocket-origin']) {
      const value = headers[name];
      if (value === undefined) continue;
      if (typeof value !== 'string' || !origins.has(value)) return false;
    }
    return true;
  };
}
