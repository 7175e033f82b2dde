import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/limits.js';
import { commandNetworkOf, loopbackProxyPorts } from '../../src/network/command-network.js';
import { parseSandboxContext } from '../../src/schemas/method-schemas.js';
import type { PermissionProfile } from '../../src/schemas/sandbox-context.js';
import { thrownFsError } from '../support/thrown.js';

const managed = (network: Record<string, unknown>) => ({
  permissions: { type: 'managed', file_system: { type: 'restricted', entries: [] }, ...network },
});
const profileOf = (network: Record<string, unknown>) =>
  parseSandboxContext(managed(network))?.permissions as PermissionProfile;
const noManaged = { enforce: false, context: null };

describe('network_domains in the sandbox context', () => {
  it('is an extra field beside `network: restricted`, kept as written', () => {
    const profile = profileOf({ network: 'restricted', network_domains: { allow: ['Example.com:443'] } });
    expect(profile).toMatchObject({
      network: 'restricted',
      network_domains: { allow: ['Example.com:443'], deny: [] },
    });
  });

  it('refuses an entry it cannot read, naming it', () => {
    expect(() => parseSandboxContext(managed({ network_domains: { allow: ['exa mple.com'] } }))).toThrow(
      /network entry `exa mple.com`: `exa mple.com` is not a host name or IP address/,
    );
  });

  it('refuses a misspelled key instead of dropping the deny list', () => {
    expect(() =>
      parseSandboxContext(managed({ network_domains: { allow: ['*'], denny: ['x.com'] } })),
    ).toThrow(/denny/);
  });

  it('refuses an allowlist beside `enabled` and where no sandbox could enforce it', () => {
    expect(() =>
      parseSandboxContext(managed({ network: 'enabled', network_domains: { allow: ['a.com'] } })),
    ).toThrow(/narrows a `restricted` network/);
    for (const type of ['disabled', 'external']) {
      expect(() =>
        parseSandboxContext({ permissions: { type, network_domains: { allow: ['a.com'] } } }),
      ).toThrow(/network_domains needs `managed` permissions/);
    }
  });

  it('bounds each list', () => {
    const many = Array.from({ length: LIMITS.networkMaxEntries + 1 }, (_, index) => `h${index}.example`);
    expect(() => parseSandboxContext(managed({ network_domains: { allow: many } }))).toThrow(
      /at most 256 entries/,
    );
  });
});

describe("a command's network", () => {
  it('follows the context when the client does not manage it', () => {
    expect(commandNetworkOf(profileOf({ network: 'restricted' }), noManaged, {})).toEqual({ kind: 'none' });
    expect(commandNetworkOf(profileOf({ network: 'enabled' }), noManaged, {})).toEqual({ kind: 'host' });
    const proxy = commandNetworkOf(
      profileOf({ network_domains: { allow: ['a.com'], deny: ['b.com'] } }),
      noManaged,
      {},
    );
    expect(proxy).toMatchObject({
      kind: 'proxy',
      allowlist: { allow: [{ text: 'a.com' }], deny: [{ text: 'b.com' }] },
    });
  });

  it("routes the client's loopback ports when it enforces managed networking, whatever the context says", () => {
    const context = { loopbackPorts: [8081, 3128], allowLocalBinding: false };
    for (const network of ['restricted', 'enabled']) {
      expect(commandNetworkOf(profileOf({ network }), { enforce: true, context }, {})).toEqual({
        kind: 'managed',
        loopbackPorts: [3128, 8081],
      });
    }
  });

  it('reads the ports from the proxy variables for a client that sends no managedNetwork, as the reference does', () => {
    const env = {
      HTTP_PROXY: 'http://127.0.0.1:3128',
      https_proxy: 'http://localhost:3128',
      ALL_PROXY: 'socks5h://[::1]:8081',
    };
    expect(commandNetworkOf(profileOf({}), { enforce: true, context: null }, env)).toEqual({
      kind: 'managed',
      loopbackPorts: [3128, 8081],
    });
    expect(
      loopbackProxyPorts({ HTTP_PROXY: 'http://proxy.corp:3128', NO_PROXY: 'http://127.0.0.1:1' }),
    ).toEqual([]);
  });

  it('refuses managed networking it cannot enforce', () => {
    expect(
      thrownFsError(() => commandNetworkOf(profileOf({}), { enforce: true, context: null }, {})).message,
    ).toMatch(/needs the ports of the client's proxy/);
    const context = { loopbackPorts: [3128], allowLocalBinding: false };
    const error = thrownFsError(() =>
      commandNetworkOf(profileOf({}), { enforce: true, context }, { HTTP_PROXY: 'http://127.0.0.1:9999' }),
    );
    expect(error).toMatchObject({ kind: 'sandbox_unavailable' });
    expect(error.message).toMatch(/127\.0\.0\.1:9999, which managedNetwork\.loopbackPorts does not list/);
    expect(
      thrownFsError(() =>
        commandNetworkOf(
          profileOf({ network_domains: { allow: ['a.com'] } }),
          { enforce: true, context },
          {},
        ),
      ).message,
    ).toMatch(/send one of them/);
  });
});

describe('unix_sockets in the sandbox context', () => {
  it('names host sockets relayed to commands, whatever their network, except the host network', () => {
    const sockets = ['file:///run/b.sock', 'file:///run/a.sock', 'file:///run/b.sock'];
    expect(commandNetworkOf(profileOf({ unix_sockets: sockets }), noManaged, {})).toEqual({
      kind: 'none',
      unixSockets: ['/run/a.sock', '/run/b.sock'],
    });
    expect(
      commandNetworkOf(
        profileOf({ unix_sockets: sockets, network_domains: { allow: ['a.com'] } }),
        noManaged,
        {},
      ),
    ).toMatchObject({ kind: 'proxy', unixSockets: ['/run/a.sock', '/run/b.sock'] });
    expect(commandNetworkOf(profileOf({ unix_sockets: [] }), noManaged, {})).toEqual({ kind: 'none' });
    expect(() => parseSandboxContext(managed({ network: 'enabled', unix_sockets: sockets }))).toThrow(
      /relayed into a command's own network namespace/,
    );
  });

  it('is bounded, made of file URIs, and refused where no sandbox could enforce it', () => {
    const many = Array.from({ length: LIMITS.unixSocketMaxEntries + 1 }, (_, i) => `file:///run/${i}.sock`);
    expect(() => parseSandboxContext(managed({ unix_sockets: many }))).toThrow(/at most/);
    expect(() => parseSandboxContext(managed({ unix_sockets: ['/run/a.sock'] }))).toThrow();
    for (const type of ['disabled', 'external'])
      expect(() =>
        parseSandboxContext({ permissions: { type, unix_sockets: ['file:///run/a.sock'] } }),
      ).toThrow(/unix_sockets needs `managed` permissions/);
  });
});
