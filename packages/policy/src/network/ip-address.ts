/**
 * IP addresses as the network allowlist judges them: parsed from their canonical text (what the
 * WHATWG host parser and getaddrinfo print), and sorted into three scopes by what reaching them
 * would mean. Pure: the broker passes in the host's own addresses, which only it can read.
 *
 * - `public`: anything a public name may resolve to.
 * - `private`: networks a machine may legitimately use but a public name should not lead to
 *   (RFC 1918, shared address space, unique-local IPv6, documentation and benchmark ranges). Only
 *   an entry naming exactly that host and port reaches them.
 * - `local`: the machine itself and what only it can reach — loopback, link-local (where cloud
 *   metadata services live), unspecified, multicast and reserved ranges, and the host's own
 *   interface addresses. Only an entry that names the address itself (or `localhost` for
 *   loopback) with its port reaches them; no DNS answer can.
 *
 * IPv6 forms that carry an IPv4 address (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64
 * `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address they carry: a socket connected to
 * `::ffff:127.0.0.1` reaches the IPv4 loopback.
 */

export type AddressScope = 'public' | 'private' | 'local';

export interface AddressClass {
  scope: AddressScope;
  /** What the range is, for messages and the audit log (`loopback`, `cloud metadata`, …). */
  label: string;
}

/** An address as bytes: 4 for IPv4, 16 for IPv6 (plain numbers, so a parsed policy can be frozen). */
export type AddressBytes = readonly number[];

interface Range {
  bytes: number[];
  prefix: number;
  scope: AddressScope;
  label: string;
}

/** Most specific first: the first range that contains an address classifies it. */
const IPV4_RANGES: readonly Range[] = [
  // The metadata services of AWS, GCP, Azure, OpenStack and most others (inside link-local).
  { bytes: [169, 254, 169, 254], prefix: 32, scope: 'local', label: 'cloud metadata' },
  // Alibaba Cloud's metadata service (inside the shared address space).
  { bytes: [100, 100, 100, 200], prefix: 32, scope: 'local', label: 'cloud metadata' },
  { bytes: [0, 0, 0, 0], prefix: 8, scope: 'local', label: 'unspecified ("this network")' },
  { bytes: [127, 0, 0, 0], prefix: 8, scope: 'local', label: 'loopback' },
  { bytes: [169, 254, 0, 0], prefix: 16, scope: 'local', label: 'link-local' },
  { bytes: [224, 0, 0, 0], prefix: 4, scope: 'local', label: 'multicast' },
  { bytes: [240, 0, 0, 0], prefix: 4, scope: 'local', label: 'reserved (broadcast)' },
  { bytes: [10, 0, 0, 0], prefix: 8, scope: 'private', label: 'private network' },
  { bytes: [172, 16, 0, 0], prefix: 12, scope: 'private', label: 'private network' },
  { bytes: [192, 168, 0, 0], prefix: 16, scope: 'private', label: 'private network' },
  { bytes: [100, 64, 0, 0], prefix: 10, scope: 'private', label: 'shared address space' },
  { bytes: [192, 0, 0, 0], prefix: 24, scope: 'private', label: 'protocol assignments' },
  { bytes: [198, 18, 0, 0], prefix: 15, scope: 'private', label: 'benchmarking' },
  { bytes: [192, 0, 2, 0], prefix: 24, scope: 'private', label: 'documentation' },
  { bytes: [198, 51, 100, 0], prefix: 24, scope: 'private', label: 'documentation' },
  { bytes: [203, 0, 113, 0], prefix: 24, scope: 'private', label: 'documentation' },
];

/** IPv6 ranges that do not carry an IPv4 address (those are unwrapped first). */
const IPV6_RANGES: readonly Range[] = [
  // AWS's metadata service over IPv6 (inside unique-local).
  {
    bytes: hex16('fd00:0ec2:0000:0000:0000:0000:0000:0254'),
    prefix: 128,
    scope: 'local',
    label: 'cloud metadata',
  },
  {
    bytes: hex16('0000:0000:0000:0000:0000:0000:0000:0000'),
    prefix: 128,
    scope: 'local',
    label: 'unspecified',
  },
  { bytes: hex16('0000:0000:0000:0000:0000:0000:0000:0001'), prefix: 128, scope: 'local', label: 'loopback' },
  {
    bytes: hex16('fe80:0000:0000:0000:0000:0000:0000:0000'),
    prefix: 10,
    scope: 'local',
    label: 'link-local',
  },
  { bytes: hex16('ff00:0000:0000:0000:0000:0000:0000:0000'), prefix: 8, scope: 'local', label: 'multicast' },
  {
    bytes: hex16('fec0:0000:0000:0000:0000:0000:0000:0000'),
    prefix: 10,
    scope: 'private',
    label: 'site-local',
  },
  {
    bytes: hex16('fc00:0000:0000:0000:0000:0000:0000:0000'),
    prefix: 7,
    scope: 'private',
    label: 'unique-local',
  },
  {
    bytes: hex16('0064:ff9b:0001:0000:0000:0000:0000:0000'),
    prefix: 48,
    scope: 'private',
    label: 'local-use NAT64',
  },
  {
    bytes: hex16('2001:0db8:0000:0000:0000:0000:0000:0000'),
    prefix: 32,
    scope: 'private',
    label: 'documentation',
  },
  { bytes: hex16('2001:0000:0000:0000:0000:0000:0000:0000'), prefix: 32, scope: 'private', label: 'Teredo' },
  { bytes: hex16('0100:0000:0000:0000:0000:0000:0000:0000'), prefix: 64, scope: 'private', label: 'discard' },
];

/** Written out in full (eight groups of four) so the table above needs no parser to read. */
function hex16(text: string): number[] {
  return text.split(':').flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

/** The bytes of a dotted-quad IPv4 address (four decimal parts, no leading zeros), or null. */
export function parseIpv4(text: string): AddressBytes | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    bytes.push(value);
  }
  return bytes;
}

/** The bytes of an IPv6 address (groups, one `::`, an optional dotted IPv4 tail; no zone), or null. */
export function parseIpv6(text: string): AddressBytes | null {
  if (text.length > 45 || !/^[0-9a-fA-F:.]+$/.test(text)) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groupsOf = (half: string): number[] | null => {
    if (half === '') return [];
    const groups: number[] = [];
    const parts = half.split(':');
    for (const [index, part] of parts.entries()) {
      if (part.includes('.')) {
        // A dotted IPv4 tail stands for the last two groups.
        const v4 = index === parts.length - 1 ? parseIpv4(part) : null;
        if (v4 === null) return null;
        groups.push(
          ((v4[0] as number) << 8) | (v4[1] as number),
          ((v4[2] as number) << 8) | (v4[3] as number),
        );
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(part)) return null;
        groups.push(Number.parseInt(part, 16));
      }
    }
    return groups;
  };
  const head = groupsOf(halves[0] as string);
  const tail = halves.length === 2 ? groupsOf(halves[1] as string) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return groups.flatMap((group) => [group >> 8, group & 0xff]);
}

/** An address of either family, or null when `text` is neither. */
export function parseIpAddress(text: string): AddressBytes | null {
  return parseIpv4(text) ?? parseIpv6(text);
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), or null. */
export function embeddedIpv4(bytes: AddressBytes): AddressBytes | null {
  if (bytes.length !== 16) return null;
  const startsWith = (prefix: number[]) => prefix.every((byte, index) => bytes[index] === byte);
  const zeros = (count: number) => new Array<number>(count).fill(0);
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible; :: and ::1 themselves excluded).
  if (startsWith([...zeros(10), 0xff, 0xff])) return bytes.slice(12);
  if (
    startsWith(zeros(12)) &&
    bytes.slice(12).some((byte, index) => byte !== 0 && !(index === 3 && byte === 1))
  )
    return bytes.slice(12);
  // 64:ff9b::a.b.c.d, the well-known NAT64 prefix.
  if (startsWith([0x00, 0x64, 0xff, 0x9b, ...zeros(8)])) return bytes.slice(12);
  // 2002:aabb:ccdd::/48, 6to4.
  if (startsWith([0x20, 0x02])) return bytes.slice(2, 6);
  return null;
}

function inRange(bytes: AddressBytes, range: Range): boolean {
  if (bytes.length !== range.bytes.length) return false;
  let bits = range.prefix;
  for (let index = 0; bits > 0; index++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((bytes[index] as number) & mask) !== ((range.bytes[index] as number) & mask)) return false;
  }
  return true;
}

/** The address as one comparable text: IPv4 dotted, IPv6 as eight full groups. */
export function addressKey(bytes: AddressBytes): string {
  if (bytes.length === 4) return [...bytes].join('.');
  const groups: string[] = [];
  for (let index = 0; index < 16; index += 2)
    groups.push(
      (((bytes[index] as number) << 8) | (bytes[index + 1] as number)).toString(16).padStart(4, '0'),
    );
  return groups.join(':');
}

/** The label of the host's own addresses (a range's label says more where one applies). */
export const HOST_ADDRESS_LABEL = "this host's own";

/**
 * The scope of an address. The host's own addresses (`hostAddresses`, as keys of `addressKey`)
 * are local whatever their range, since reaching one reaches every service the host listens on.
 */
export function classifyAddress(bytes: AddressBytes, hostAddresses: ReadonlySet<string>): AddressClass {
  const judged = embeddedIpv4(bytes) ?? bytes;
  const range = (judged.length === 4 ? IPV4_RANGES : IPV6_RANGES).find((candidate) =>
    inRange(judged, candidate),
  );
  if (range?.scope === 'local') return { scope: 'local', label: range.label };
  if (hostAddresses.has(addressKey(judged)) || hostAddresses.has(addressKey(bytes)))
    return { scope: 'local', label: HOST_ADDRESS_LABEL };
  return range === undefined
    ? { scope: 'public', label: 'public' }
    : { scope: range.scope, label: range.label };
}

/** Two addresses are the same host when their bytes are, an IPv6 that carries an IPv4 counting as it. */
export function sameAddress(a: AddressBytes, b: AddressBytes): boolean {
  return addressKey(embeddedIpv4(a) ?? a) === addressKey(embeddedIpv4(b) ?? b);
}
