import { isIP } from 'node:net';
import { FsError } from '@fs-sandbox/policy';

export type ListenAddress =
  | { kind: 'stdio' }
  | { kind: 'websocket'; host: string; port: number; loopback: boolean };

/** `stdio` (or `stdio://`, as the app-server writes it) or `ws://HOST:PORT` (port 0 picks a free port). */
export function parseListenAddress(text: string): ListenAddress {
  if (text === 'stdio' || text === 'stdio://') return { kind: 'stdio' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new FsError('invalid_params', `--listen must be \`stdio\` or \`ws://HOST:PORT\`, got \`${text}\``);
  }
  if (url.protocol !== 'ws:' || url.pathname !== '/' || url.search !== '' || url.username !== '') {
    throw new FsError('invalid_params', `--listen must be \`stdio\` or \`ws://HOST:PORT\`, got \`${text}\``);
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    kind: 'websocket',
    host,
    // URL drops the scheme's default port (80), so an empty port means 80.
    port: url.port === '' ? 80 : Number(url.port),
    loopback: isLoopback(host),
  };
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
