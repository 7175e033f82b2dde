import { lstat, realpath } from 'node:fs/promises';
import { FsError, pathStartsWith } from '@fs-sandbox/policy';

/**
 * How a command reaches the host unix sockets its context names (`unix_sockets`, `run
 * --allow-unix-socket PATH`), and no other: through the broker, never by a socket of its own.
 *
 * Why not bind the named sockets into the sandbox and let the command create AF_UNIX sockets for
 * them: `connect(2)` to a pathname socket checks only write permission on the socket file (a
 * read-only mount does not count, and the sandbox's uid is the broker's), and a seccomp filter
 * cannot read the path it is given. A command allowed one AF_UNIX socket could therefore connect
 * to every socket its view shows: the workspace's, every readable root's, the whole disk's under
 * the read-only profile. Restricting pathname connects by path needs a supervisor (seccomp user
 * notification, ptrace) or a Landlock right this kernel generation lacks, none of which node can
 * drive.
 *
 * So the command keeps the seccomp filter that refuses `socket(AF_UNIX)`, and each named socket
 * becomes a TCP port on 127.0.0.1 inside the command's own network namespace, listened on by the
 * same set-up step and handed to the broker as the proxy's ports are (sandbox-listeners.ts). The
 * broker, outside, connects each accepted connection to the socket's real path and relays bytes
 * (command-proxy.ts serveUnixRelay). The command learns the ports from `FS_SANDBOX_UNIX_SOCKETS`
 * (JSON: path → `127.0.0.1:PORT`). What it costs: a client must speak to a TCP address — docker
 * (`DOCKER_HOST=tcp://…`), D-Bus (`tcp:host=…`), X11, databases and HTTP servers can; a protocol
 * bound to unix sockets (ssh-agent's `SSH_AUTH_SOCK`, credentials passed with SCM_CREDENTIALS or
 * descriptors with SCM_RIGHTS) cannot, and the server sees the broker as its peer.
 *
 * The socket is resolved once, when the command starts, to its real path, which must be a socket
 * outside every writable root: a path the command could rewrite (a socket in the workspace, or a
 * directory there on the way) would let it re-point the relay at any socket the broker can reach.
 */

/** Ports the relays listen on inside the namespace: the first free ones from here, in the order of the paths. */
export const UNIX_RELAY_FIRST_PORT = 9500;

/** The command's variable naming each relayed socket's address. */
export const UNIX_RELAY_VARIABLE = 'FS_SANDBOX_UNIX_SOCKETS';

/** A named socket and where the broker connects for it. */
export interface UnixSocketRelay {
  /** As the context names it (native). */
  path: string;
  /** Its real path when the command started. */
  target: string;
}

/**
 * The named sockets resolved: each must exist, be a socket, and lie (by its real path) outside the
 * writable roots (`permission_denied` otherwise, naming the rule; `not_found` for a missing one).
 */
export async function resolveUnixSocketRelays(
  paths: readonly string[],
  writableRoots: readonly string[],
): Promise<UnixSocketRelay[]> {
  if (paths.length === 0) return [];
  const roots = new Set<string>();
  for (const root of writableRoots) {
    roots.add(root);
    try {
      roots.add(await realpath(root));
    } catch {
      // A writable root that does not exist yet holds no socket.
    }
  }
  const relays: UnixSocketRelay[] = [];
  for (const path of paths) {
    let target: string;
    try {
      target = await realpath(path);
    } catch (error) {
      throw new FsError('not_found', `unix socket ${path} cannot be relayed: ${(error as Error).message}`, {
        kind: 'sandboxPreparation',
      });
    }
    if (!(await lstat(target)).isSocket())
      throw new FsError('invalid_params', `unix socket ${path} cannot be relayed: ${target} is not a socket`);
    const inside = [...roots].find(
      (root) => pathStartsWith('linux', path, root) || pathStartsWith('linux', target, root),
    );
    if (inside !== undefined)
      throw new FsError(
        'permission_denied',
        `unix socket ${path} cannot be relayed: it lies inside the writable root ${inside}, where the command could replace it with a link to any other socket`,
        { kind: 'sandboxPreparation' },
      );
    relays.push({ path, target });
  }
  return relays;
}

/** The port of each relay, the first free ones from UNIX_RELAY_FIRST_PORT that `taken` does not hold. */
export function unixRelayPorts(count: number, taken: readonly number[]): number[] {
  const ports: number[] = [];
  for (let port = UNIX_RELAY_FIRST_PORT; ports.length < count; port += 1)
    if (!taken.includes(port)) ports.push(port);
  return ports;
}
