import { LIMITS } from '../limits.js';
import { type CanonicalHost, canonicalHost, parsePort } from './network-host.js';

/**
 * One entry of a network allowlist or denylist, `HOST[:PORT]` as a person writes it:
 *
 * - `registry.npmjs.org` — that host, any port; `registry.npmjs.org:443` — that port only.
 * - `*.github.com[:PORT]` — every name below github.com (at any depth), not github.com itself.
 * - `*[:PORT]` — any host; the address rules still apply (see network-decision.ts).
 * - `127.0.0.1:8080`, `[::1]:8080`, `10.0.0.5` — an IP literal (IPv6 in brackets when a port
 *   follows). Numeric IPv4 spellings (`2130706433`) read as the address they mean.
 *
 * Parsed once, when the context is; what the proxy and `why` compare are these parsed forms.
 */
export type EntryHost =
  | { kind: 'any' }
  | { kind: 'exact'; host: CanonicalHost }
  /** Names ending in `.${suffix}`. */
  | { kind: 'subdomains'; suffix: string };

export interface NetworkEntry {
  /** The entry as written, for messages and the audit log. */
  text: string;
  host: EntryHost;
  /** The one port it allows, or null for any port. */
  port: number | null;
}

/** The entry, or why it cannot be read. */
export function parseNetworkEntry(text: string): NetworkEntry | string {
  if (text.length === 0) return 'an empty entry names no host';
  if (text.length > LIMITS.networkEntryMaxChars)
    return `an entry is at most ${LIMITS.networkEntryMaxChars} characters`;
  const split = splitPort(text);
  if (typeof split === 'string') return split;
  const { hostText, port } = split;
  if (hostText === '*') return { text, host: { kind: 'any' }, port };
  if (hostText.startsWith('*.')) {
    const suffix = canonicalHost(hostText.slice(2));
    if (suffix === null || suffix.address !== null)
      return `\`${hostText}\`: a wildcard is \`*.\` followed by a domain name`;
    return { text, host: { kind: 'subdomains', suffix: suffix.name }, port };
  }
  if (hostText.includes('*'))
    return `\`${hostText}\`: \`*\` is allowed only as the whole host or a leading \`*.\``;
  const host = canonicalHost(hostText);
  if (host === null) return `\`${hostText}\` is not a host name or IP address`;
  return { text, host: { kind: 'exact', host }, port };
}

function splitPort(text: string): { hostText: string; port: number | null } | string {
  const bracketed = /^(\[[^\]]*\])(?::(.*))?$/.exec(text);
  if (bracketed !== null) return withPort(bracketed[1] as string, bracketed[2]);
  const colons = text.split(':').length - 1;
  // Two or more colons without brackets: a bare IPv6 address, which has no room for a port.
  if (colons >= 2) return { hostText: text, port: null };
  if (colons === 1) {
    const at = text.lastIndexOf(':');
    return withPort(text.slice(0, at), text.slice(at + 1));
  }
  return { hostText: text, port: null };
}

function withPort(
  hostText: string,
  portText: string | undefined,
): { hostText: string; port: number | null } | string {
  if (portText === undefined) return { hostText, port: null };
  const port = parsePort(portText);
  return port === null ? `\`${portText}\` is not a port (1-65535)` : { hostText, port };
}

/** Whether the entry names this host (as canonical) and port. */
export function entryMatches(entry: NetworkEntry, host: CanonicalHost, port: number): boolean {
  if (entry.port !== null && entry.port !== port) return false;
  switch (entry.host.kind) {
    case 'any':
      return true;
    case 'exact':
      return entry.host.host.name === host.name;
    case 'subdomains':
      return host.address === null && host.name.endsWith(`.${entry.host.suffix}`);
  }
}

/** An entry that names one host and one port: the only kind that reaches non-public addresses. */
export function isExactHostAndPort(entry: NetworkEntry): boolean {
  return entry.host.kind === 'exact' && entry.port !== null;
}
