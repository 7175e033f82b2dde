import { chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { afterAll, beforeAll } from 'vitest';
import { ServeProcess } from '../fixtures/conformance/serve-process.js';
import {
  type CliRun,
  type CliUser,
  NOBODY_UID,
  personPath,
  type WireErrorShape,
  withHelperRuntime,
} from './cli.js';

/**
 * One `fs-sandbox serve --listen stdio` per attack mode (user × pre-check), shared by every case of
 * a suite: a case is one request to it rather than a new CLI process, so the attack matrices keep
 * their coverage at a fraction of the cost. The CLI's own path (`fs-sandbox call`, its flags and
 * exit codes) keeps a smoke test per mode in each suite.
 *
 * The server runs as the mode's user (nobody through setpriv), with the pre-check off where the mode
 * says, with the helper runtime of the test run (FS_SANDBOX_HELPER_RUNTIME), a PATH holding this
 * repository's CLI and a TMPDIR of its own that every call checks is still empty afterwards.
 */

export interface ServedOutcome {
  /** 0 for a result, 1 for an error, as `fs-sandbox call` exits. */
  code: number;
  result?: Record<string, unknown>;
  error?: WireErrorShape;
  /** The reply line as stdout, and what the server wrote on stderr while the call ran. */
  run: Pick<CliRun, 'stdout' | 'stderr'>;
}

export interface ServedBroker {
  call(method: string, params: Record<string, unknown>): Promise<ServedOutcome>;
  /** The server's TMPDIR: nothing a request does may leave anything there. */
  readonly tmp: string;
}

export function useServedBroker(user: CliUser, precheck: boolean): ServedBroker {
  let served: ServeProcess | null = null;
  let tmp = '';
  beforeAll(async () => {
    tmp = await mkdtemp('/tmp/fs-sandbox-served-tmp-');
    if (user === 'nobody') await chown(tmp, NOBODY_UID, NOBODY_UID);
    served = ServeProcess.start(precheck ? [] : ['--no-precheck'], {
      user,
      env: withHelperRuntime({ PATH: personPath(), TMPDIR: tmp }),
      cwd: '/',
    });
    await served.handshake();
  });
  afterAll(async () => {
    if (served !== null && (await served.stop()) !== 0)
      throw new Error(`serve exited badly: ${served.stderr}`);
    if (tmp !== '') await rm(tmp, { recursive: true, force: true });
  });
  return {
    get tmp() {
      return tmp;
    },
    async call(method, params) {
      if (served === null) throw new Error('the served broker is used before its beforeAll hook ran');
      const stderrBefore = served.stderr.length;
      const linesBefore = served.rawLines.length;
      const reply = await served.request(method, params);
      const stdout =
        served.rawLines.slice(linesBefore).find((line) => line.includes(`"id":"${reply.id}"`)) ?? '';
      const left = await readdir(tmp);
      if (left.length > 0) throw new Error(`${method} left ${left.join(', ')} in the server's TMPDIR`);
      const run = { stdout, stderr: served.stderr.slice(stderrBefore) };
      if (reply.error !== undefined) return { code: 1, error: reply.error as WireErrorShape, run };
      return { code: 0, result: reply.result, run };
    },
  };
}
