import {
  type AddressBytes,
  type AddressClass,
  addressKey,
  classifyAddress,
  HOST_ADDRESS_LABEL,
  sameAddress,
} from './ip-address.js';
import { entryMatches, isExactHostAndPort, type NetworkEntry } from './network-entry.js';
import { type CanonicalHost, hostForAuthority } from './network-host.js';

/**
 * What a command may reach through the proxy. A destination is judged twice, in this order:
 *
 * 1. By name (`decideName`), before anything is looked up: a deny entry that matches refuses it;
 *    otherwise an allow entry must match.
 * 2. By each address the name resolves to (`decideAddress`), right before the connection is made
 *    to exactly that address (the proxy connects to what it judged, never to the name again, so a
 *    DNS answer that changes in between reaches nothing new). Deny entries that are IP literals
 *    refuse the address whatever name led to it. A public address passes. A private one passes
 *    only when an allow entry names exactly this host and port; a local one (loopback,
 *    link-local and cloud metadata, the host's own addresses, …) only when such an entry names
 *    the address itself, or `localhost` for a loopback address. No DNS answer, and no wildcard,
 *    can lead a command to the machine's own services.
 */
export interface NetworkAllowlist {
  allow: readonly NetworkEntry[];
  deny: readonly NetworkEntry[];
}

export type NameDecision =
  /** `entries`: every allow entry that matches, an exact host-and-port one first. */
  | { allowed: true; entries: readonly NetworkEntry[] }
  | { allowed: false; reason: string; entry: NetworkEntry | null };

export type AddressDecision =
  | { allowed: true; class: AddressClass }
  | { allowed: false; reason: string; class: AddressClass | null };

export function destinationText(host: CanonicalHost, port: number): string {
  return `${hostForAuthority(host)}:${port}`;
}

export function decideName(list: NetworkAllowlist, host: CanonicalHost, port: number): NameDecision {
  const where = destinationText(host, port);
  const denied = list.deny.find((entry) => entryMatches(entry, host, port));
  if (denied !== undefined)
    return { allowed: false, reason: `${where} is denied by the entry ${denied.text}`, entry: denied };
  const entries = list.allow.filter((entry) => entryMatches(entry, host, port));
  if (entries.length === 0)
    return { allowed: false, reason: `${where} is not in the network allowlist`, entry: null };
  return {
    allowed: true,
    entries: [...entries].sort((a, b) => Number(isExactHostAndPort(b)) - Number(isExactHostAndPort(a))),
  };
}

export function decideAddress(
  list: NetworkAllowlist,
  allowedBy: readonly NetworkEntry[],
  host: CanonicalHost,
  port: number,
  address: AddressBytes,
  hostAddresses: ReadonlySet<string>,
): AddressDecision {
  const where = destinationText(host, port);
  const shown = addressText(address);
  const via = host.address === null ? `${where} resolves to ${shown}` : where;
  const deniedAddress = list.deny.find(
    (entry) =>
      entry.host.kind === 'exact' &&
      entry.host.host.address !== null &&
      sameAddress(entry.host.host.address, address) &&
      (entry.port === null || entry.port === port),
  );
  if (deniedAddress !== undefined)
    return { allowed: false, reason: `${via}, which the entry ${deniedAddress.text} denies`, class: null };
  const addressClass = classifyAddress(address, hostAddresses);
  if (addressClass.scope === 'public') return { allowed: true, class: addressClass };
  const exact = allowedBy.filter(isExactHostAndPort);
  const reaches =
    addressClass.scope === 'private'
      ? exact.length > 0
      : exact.some((entry) => namesAddressItself(entry, address, addressClass));
  if (reaches) return { allowed: true, class: addressClass };
  const needed =
    addressClass.scope === 'private'
      ? `an entry naming exactly ${where}`
      : `an entry naming that address and port (${hostForAuthority({ name: shown, address })}:${port})`;
  return {
    allowed: false,
    reason: `${via}, ${addressPhrase(addressClass.label)}: only ${needed} reaches it`,
    class: addressClass,
  };
}

/** A local address is reached only by an entry that is that address, or `localhost` for loopback. */
function namesAddressItself(entry: NetworkEntry, address: AddressBytes, addressClass: AddressClass): boolean {
  if (entry.host.kind !== 'exact') return false;
  const named = entry.host.host;
  if (named.address !== null) return sameAddress(named.address, address);
  return named.name === 'localhost' && addressClass.label === 'loopback';
}

/** An address as people write it: dotted IPv4, compressed IPv6. */
export function addressText(address: AddressBytes): string {
  if (address.length === 4) return address.join('.');
  return new URL(`http://[${addressKey(address)}]/`).hostname.slice(1, -1);
}

/** `a loopback address`, `an unspecified address`, `one of this host's own addresses`. */
export function addressPhrase(label: string): string {
  if (label === HOST_ADDRESS_LABEL) return `one of ${label} addresses`;
  return `${/^[aeiou]/.test(label) ? 'an' : 'a'} ${label} address`;
}
