import { describe, expect, it } from 'vitest';
import { parseIpAddress } from '../../src/network/ip-address.js';
import { decideAddress, decideName, type NetworkAllowlist } from '../../src/network/network-decision.js';
import { entryMatches, type NetworkEntry, parseNetworkEntry } from '../../src/network/network-entry.js';
import { type CanonicalHost, canonicalHost, parseAuthority } from '../../src/network/network-host.js';

const entry = (text: string): NetworkEntry => {
  const parsed = parseNetworkEntry(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
};
const host = (text: string): CanonicalHost => {
  const parsed = canonicalHost(text);
  if (parsed === null) throw new Error(`not a host: ${text}`);
  return parsed;
};
const list = (allow: string[], deny: string[] = []): NetworkAllowlist => ({
  allow: allow.map(entry),
  deny: deny.map(entry),
});

/** Both judgements, as the proxy makes them: by name, then by the address it would connect to. */
function decide(
  allowlist: NetworkAllowlist,
  target: string,
  port: number,
  address: string,
  own: string[] = [],
) {
  const name = decideName(allowlist, host(target), port);
  if (!name.allowed) return name.reason;
  const decision = decideAddress(
    allowlist,
    name.entries,
    host(target),
    port,
    parseIpAddress(address) as number[],
    new Set(own),
  );
  return decision.allowed ? 'allowed' : decision.reason;
}

describe('host spellings', () => {
  it('reads every spelling of one host as one canonical name', () => {
    expect(host('Example.COM.').name).toBe('example.com');
    expect(host('ü.example').name).toBe('xn--tda.example');
    for (const spelling of ['2130706433', '0x7f.1', '0177.0.0.1', '127.1', '127.0.0.1']) {
      expect(host(spelling)).toEqual({ name: '127.0.0.1', address: [127, 0, 0, 1] });
    }
    expect(host('[0:0:0:0:0:0:0:1]').name).toBe('::1');
    expect(host('::ffff:127.0.0.1').name).toBe('::ffff:7f00:1');
  });

  it('refuses what is not a plain host rather than read it as some parser would', () => {
    for (const bad of [
      'a@b',
      '%41.com',
      'a b',
      'a/b',
      'a..b',
      '-a.com',
      'foo.123',
      'fe80::1%eth0',
      '',
      'a'.repeat(64),
    ]) {
      expect(canonicalHost(bad), bad).toBeNull();
    }
  });

  it('splits CONNECT authorities, requiring a port', () => {
    expect(parseAuthority('example.com:443')).toEqual({ host: host('example.com'), port: 443 });
    expect(parseAuthority('[::1]:8080')?.host.name).toBe('::1');
    for (const bad of [
      'example.com',
      'example.com:0',
      'example.com:65536',
      'example.com:0443',
      '::1:80',
      'a@b:80',
    ]) {
      expect(parseAuthority(bad), bad).toBeNull();
    }
  });
});

describe('entries', () => {
  it('parses host, wildcard, any and IP forms with an optional port', () => {
    expect(entry('registry.npmjs.org')).toMatchObject({ host: { kind: 'exact' }, port: null });
    expect(entry('*.github.com:443')).toMatchObject({
      host: { kind: 'subdomains', suffix: 'github.com' },
      port: 443,
    });
    expect(entry('*')).toMatchObject({ host: { kind: 'any' }, port: null });
    expect(entry('[::1]:8080')).toMatchObject({ host: { kind: 'exact', host: { name: '::1' } }, port: 8080 });
    expect(entry('fd00::1')).toMatchObject({ host: { kind: 'exact' }, port: null });
    expect(entry('2130706433:80')).toMatchObject({
      host: { kind: 'exact', host: { name: '127.0.0.1' } },
      port: 80,
    });
  });

  it('says why an entry cannot be read', () => {
    expect(parseNetworkEntry('a*.com')).toMatch(/leading `\*\.`/);
    expect(parseNetworkEntry('*.127.0.0.1')).toMatch(/domain name/);
    expect(parseNetworkEntry('example.com:http')).toMatch(/not a port/);
    expect(parseNetworkEntry('exa mple.com')).toMatch(/not a host name/);
    expect(parseNetworkEntry('')).toMatch(/empty/);
  });

  it('matches subdomains at any depth but not the domain itself', () => {
    const wildcard = entry('*.github.com');
    expect(entryMatches(wildcard, host('api.github.com'), 443)).toBe(true);
    expect(entryMatches(wildcard, host('a.b.github.com'), 443)).toBe(true);
    expect(entryMatches(wildcard, host('github.com'), 443)).toBe(false);
    expect(entryMatches(wildcard, host('evilgithub.com'), 443)).toBe(false);
    expect(entryMatches(entry('github.com:443'), host('github.com'), 80)).toBe(false);
  });
});

describe('deciding a destination', () => {
  it('allows a listed host at a public address and refuses the rest by name', () => {
    const allowlist = list(['registry.npmjs.org', '*.github.com:443']);
    expect(decide(allowlist, 'registry.npmjs.org', 443, '104.16.0.1')).toBe('allowed');
    expect(decide(allowlist, 'api.github.com', 443, '140.82.0.1')).toBe('allowed');
    expect(decide(allowlist, 'api.github.com', 22, '140.82.0.1')).toBe(
      'api.github.com:22 is not in the network allowlist',
    );
    expect(decide(allowlist, 'example.com', 443, '93.184.0.1')).toBe(
      'example.com:443 is not in the network allowlist',
    );
  });

  it('lets deny entries win, by name and by the address a name resolves to', () => {
    const allowlist = list(['*'], ['evil.example', '203.0.113.9']);
    expect(decide(allowlist, 'evil.example', 443, '8.8.8.8')).toBe(
      'evil.example:443 is denied by the entry evil.example',
    );
    expect(decide(allowlist, 'fine.example', 443, '203.0.113.9')).toBe(
      'fine.example:443 resolves to 203.0.113.9, which the entry 203.0.113.9 denies',
    );
  });

  it('never lets a name or a wildcard lead to a local address', () => {
    const allowlist = list(['*', 'localhost', 'rebind.example:443']);
    expect(decide(allowlist, 'rebind.example', 443, '127.0.0.1')).toMatch(
      /^rebind\.example:443 resolves to 127\.0\.0\.1, a loopback address: only an entry naming that address and port \(127\.0\.0\.1:443\) reaches it$/,
    );
    expect(decide(allowlist, 'localhost', 8080, '127.0.0.1')).toMatch(/loopback address/);
    expect(decide(allowlist, 'metadata.example', 80, '169.254.169.254')).toMatch(/a cloud metadata address/);
    expect(decide(allowlist, 'x.example', 80, 'fd00:ec2::254')).toMatch(/a cloud metadata address/);
    expect(decide(allowlist, 'x.example', 80, '::ffff:127.0.0.1')).toMatch(/loopback/);
    expect(decide(allowlist, '2130706433', 80, '127.0.0.1')).toMatch(/^127\.0\.0\.1:80, a loopback address/);
    expect(decide(allowlist, 'x.example', 80, '198.51.100.20', ['198.51.100.20'])).toMatch(
      /one of this host's own addresses/,
    );
  });

  it('reaches a local address only through an entry naming it (or localhost) with its port', () => {
    expect(decide(list(['127.0.0.1:8080']), '127.0.0.1', 8080, '127.0.0.1')).toBe('allowed');
    expect(decide(list(['127.0.0.1:8080']), '127.0.0.1', 8081, '127.0.0.1')).toMatch(
      /not in the network allowlist/,
    );
    expect(decide(list(['127.0.0.1']), '127.0.0.1', 8080, '127.0.0.1')).toMatch(/loopback address/);
    expect(decide(list(['localhost:8080']), 'localhost', 8080, '127.0.0.1')).toBe('allowed');
    expect(decide(list(['localhost:8080']), 'localhost', 8080, '169.254.169.254')).toMatch(/cloud metadata/);
    expect(decide(list(['[::1]:8080']), '::1', 8080, '::1')).toBe('allowed');
  });

  it('reaches a private address only through an entry naming exactly that host and port', () => {
    expect(decide(list(['registry.lan:443']), 'registry.lan', 443, '10.0.0.5')).toBe('allowed');
    expect(decide(list(['registry.lan']), 'registry.lan', 443, '10.0.0.5')).toBe(
      'registry.lan:443 resolves to 10.0.0.5, a private network address: only an entry naming exactly registry.lan:443 reaches it',
    );
    expect(decide(list(['*.lan:443']), 'registry.lan', 443, '10.0.0.5')).toMatch(/private network/);
  });
});
