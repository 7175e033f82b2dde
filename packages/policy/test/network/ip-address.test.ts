import { describe, expect, it } from 'vitest';
import {
  addressKey,
  classifyAddress,
  embeddedIpv4,
  parseIpAddress,
  parseIpv4,
  parseIpv6,
  sameAddress,
} from '../../src/network/ip-address.js';

const scopeOf = (text: string, hostAddresses: string[] = []) => {
  const bytes = parseIpAddress(text);
  if (bytes === null) throw new Error(`not an address: ${text}`);
  return classifyAddress(bytes, new Set(hostAddresses));
};

describe('parsing addresses', () => {
  it('reads dotted IPv4 and nothing looser', () => {
    expect(parseIpv4('127.0.0.1')).toEqual([127, 0, 0, 1]);
    for (const loose of ['127.1', '0x7f.0.0.1', '0177.0.0.1', '2130706433', '256.0.0.1', '1.2.3.4.5', '']) {
      expect(parseIpv4(loose), loose).toBeNull();
    }
  });

  it('reads IPv6 with one ::, a dotted tail, and refuses the rest', () => {
    expect(parseIpv6('::1')).toEqual([...new Array(15).fill(0), 1]);
    expect(parseIpv6('::ffff:127.0.0.1')?.slice(10)).toEqual([0xff, 0xff, 127, 0, 0, 1]);
    expect(parseIpv6('1:2:3:4:5:6:7:8')).not.toBeNull();
    for (const bad of [
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      '::g',
      'fe80::1%eth0',
      '1:2:3:4:5:6:7',
      '12345::',
      '::1.2.3',
    ]) {
      expect(parseIpv6(bad), bad).toBeNull();
    }
  });
});

describe('classifying addresses', () => {
  it.each([
    ['127.0.0.1', 'local', 'loopback'],
    ['127.255.1.2', 'local', 'loopback'],
    ['0.0.0.0', 'local', 'unspecified ("this network")'],
    ['169.254.169.254', 'local', 'cloud metadata'],
    ['169.254.3.4', 'local', 'link-local'],
    ['100.100.100.200', 'local', 'cloud metadata'],
    ['224.0.0.1', 'local', 'multicast'],
    ['255.255.255.255', 'local', 'reserved (broadcast)'],
    ['10.1.2.3', 'private', 'private network'],
    ['172.31.255.255', 'private', 'private network'],
    ['172.32.0.1', 'public', 'public'],
    ['192.168.0.1', 'private', 'private network'],
    ['100.64.0.1', 'private', 'shared address space'],
    ['8.8.8.8', 'public', 'public'],
    ['::1', 'local', 'loopback'],
    ['::', 'local', 'unspecified'],
    ['fe80::1', 'local', 'link-local'],
    ['fd00:ec2::254', 'local', 'cloud metadata'],
    ['fd12::1', 'private', 'unique-local'],
    ['ff02::1', 'local', 'multicast'],
    ['2606:4700::1111', 'public', 'public'],
  ])('%s is %s (%s)', (text, scope, label) => {
    expect(scopeOf(text)).toEqual({ scope, label });
  });

  it('judges an IPv6 address by the IPv4 address it carries', () => {
    for (const text of [
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::127.0.0.1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
    ]) {
      expect(scopeOf(text), text).toEqual({ scope: 'local', label: 'loopback' });
    }
    expect(scopeOf('::ffff:169.254.169.254').label).toBe('cloud metadata');
    expect(embeddedIpv4(parseIpv6('::1') as number[])).toBeNull();
    expect(embeddedIpv4(parseIpv6('2606:4700::1') as number[])).toBeNull();
  });

  it("counts the host's own addresses as local, in either spelling", () => {
    const own = [addressKey([203, 0, 114, 7])];
    expect(scopeOf('203.0.114.7', own)).toEqual({ scope: 'local', label: "this host's own" });
    expect(scopeOf('::ffff:203.0.114.7', own).label).toBe("this host's own");
    expect(scopeOf('127.0.0.1', [addressKey([127, 0, 0, 1])]).label).toBe('loopback');
    expect(scopeOf('203.0.114.8', own).scope).toBe('public');
  });

  it('compares addresses across their IPv6 wrappings', () => {
    expect(
      sameAddress(parseIpAddress('127.0.0.1') as number[], parseIpAddress('::ffff:127.0.0.1') as number[]),
    ).toBe(true);
    expect(sameAddress(parseIpAddress('::1') as number[], parseIpAddress('127.0.0.1') as number[])).toBe(
      false,
    );
  });
});
