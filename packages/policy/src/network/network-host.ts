import { type AddressBytes, parseIpv4, parseIpv6 } from './ip-address.js';

/**
 * A host name or IP literal in the one spelling the allowlist compares: lowercase ASCII (IDN in
 * punycode), no trailing dot, IPv4 in dotted decimal, IPv6 compressed and without brackets. Every
 * host a client asks for and every host an entry names goes through `canonicalHost`, so two
 * spellings of one host (`0x7f.1` and `127.0.0.1`, `Example.COM.` and `example.com`) are the same
 * string, and a spelling that is not a plain host (`a@b`, `%41.com`, a zone id) is refused rather
 * than read the way some other parser would.
 */
export interface CanonicalHost {
  /** The canonical text (IPv6 without brackets). */
  name: string;
  /** The address when the host is an IP literal, else null (a name the proxy must resolve). */
  address: AddressBytes | null;
}

/** A name as DNS spells it: labels of letters, digits, `-` (not at either end) and `_`. */
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;
const MAX_NAME_LENGTH = 253;
/** What may appear in a host as written: no userinfo, path, query, percent-escape, space or control. */
const HOST_TEXT = /^[^\s@/\\?#%[\]<>^|*:"'`{}]+$/u;

/**
 * The canonical form of a host as a client or an entry wrote it (IPv6 in brackets or bare), or
 * null when it is not a host name or IP literal this proxy will look up.
 */
export function canonicalHost(written: string): CanonicalHost | null {
  if (written.length === 0 || written.length > MAX_NAME_LENGTH + 2) return null;
  const bracketed = /^\[([0-9a-fA-F:.]+)\]$/.exec(written)?.[1];
  const v6Text = bracketed ?? (written.includes(':') ? written : undefined);
  if (v6Text !== undefined) {
    const bytes = parseIpv6(v6Text);
    if (bytes === null) return null;
    // The WHATWG serializer compresses the longest run of zero groups, as RFC 5952 asks.
    return { name: new URL(`http://[${v6Text}]/`).hostname.slice(1, -1), address: bytes };
  }
  if (!HOST_TEXT.test(written)) return null;
  let hostname: string;
  try {
    // The WHATWG host parser: lowercases, turns IDN into punycode, and reads every IPv4 spelling
    // inet_aton accepts (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`) as the address it means.
    hostname = new URL(`http://${written}/`).hostname;
  } catch {
    return null;
  }
  const v4 = parseIpv4(hostname);
  if (v4 !== null) return { name: hostname, address: v4 };
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) return null;
  if (!name.split('.').every((label) => LABEL.test(label))) return null;
  return { name, address: null };
}

/** The host as a URL authority writes it: an IPv6 literal in brackets. */
export function hostForAuthority(host: CanonicalHost): string {
  return host.address !== null && host.address.length === 16 ? `[${host.name}]` : host.name;
}

/**
 * A `HOST:PORT` authority (CONNECT's request target, `[v6]:port` for IPv6), split and checked: the
 * port is required and decimal. Null when it is not one.
 */
export function parseAuthority(authority: string): { host: CanonicalHost; port: number } | null {
  const match = /^(\[[^\]]*\]|[^:]*):([0-9]{1,5})$/.exec(authority);
  if (match === null) return null;
  const port = parsePort(match[2] as string);
  const host = canonicalHost(match[1] as string);
  return port === null || host === null ? null : { host, port };
}

/** A TCP port 1..65535 written in decimal without leading zeros, or null. */
export function parsePort(text: string): number | null {
  if (!/^[1-9][0-9]{0,4}$/.test(text)) return null;
  const port = Number(text);
  return port <= 65535 ? port : null;
}
