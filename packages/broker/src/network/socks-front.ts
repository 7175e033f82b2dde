import type { Socket } from 'node:net';
import { canonicalHost } from '@fs-sandbox/policy';
import { Socks5Server } from '@pondwader/socks5-server';
import { networkEvent } from './network-event.js';
import type { ProxyCore } from './proxy-core.js';

/**
 * The SOCKS5 proxy of a command. `@pondwader/socks5-server` reads the greeting and the request
 * (no authentication; CONNECT only: BIND and UDP ASSOCIATE are answered "command not supported");
 * the destination is then judged and connected here, before the package answers: a refusal by the
 * allowlist is reply 2 ("not allowed by ruleset"), a destination that cannot be resolved or reached
 * reply 4 ("host unreachable"). With `socks5h://` the proxy resolves names, as the command's
 * namespace has no DNS of its own; with `socks5://` the client resolves first, and fails there.
 */
export function socksFront(core: ProxyCore): (socket: Socket) => void {
  const server = new Socks5Server();
  // Answering undefined leaves the reply to us (a failure that is not a refusal); the package's
  // type only names true and false.
  server.setRulesetValidator(
    (connection) =>
      onRequest(core, connection).catch((error) => {
        core.broken(connection.socket, error);
        return undefined;
      }) as Promise<boolean>,
  );
  server.setConnectionHandler((connection, sendStatus) => {
    const { upstream, address, started } = connection.metadata as Granted;
    sendStatus('REQUEST_GRANTED');
    const host = canonicalHost(connection.destAddress);
    core.relay(
      { protocol: 'socks5', host, port: connection.destPort, address, started },
      connection.socket as Socket,
      upstream,
    );
  });
  return (socket) => server._handleConnection(socket);
}

type Connection = Parameters<NonNullable<Socks5Server['rulesetValidator']>>[0];

interface Granted {
  upstream: Socket;
  address: string;
  started: number;
}

/** RFC 1928 §6 reply "host unreachable", with a zero IPv4 bound address. */
const HOST_UNREACHABLE = Buffer.from([5, 4, 0, 1, 0, 0, 0, 0, 0, 0]);

async function onRequest(core: ProxyCore, connection: Connection): Promise<boolean | undefined> {
  const started = Date.now();
  const host = canonicalHost(connection.destAddress);
  const port = connection.destPort;
  if (host === null || port < 1) {
    const reason = `${JSON.stringify(connection.destAddress.slice(0, 300))} is not a host name or IP address`;
    core.report(networkEvent('socks5', started, { port, reason }));
    return false;
  }
  const opened = await core.open(host, port);
  if (opened.kind === 'connected') {
    if (connection.socket.destroyed) {
      opened.socket.destroy();
      return false;
    }
    connection.metadata = { upstream: opened.socket, address: opened.address, started } satisfies Granted;
    return true;
  }
  core.report(
    networkEvent('socks5', started, {
      host: host.name,
      port,
      address: opened.address,
      outcome: opened.kind,
      reason: opened.reason,
    }),
  );
  if (opened.kind === 'refused') return false;
  connection.socket.end(HOST_UNREACHABLE);
  return undefined;
}
