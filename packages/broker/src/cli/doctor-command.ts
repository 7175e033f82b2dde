import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { helperBundlePath } from '@fs-sandbox/helper/bundle-path';
import { currentHostOs, type HostOs, nativeToPathUri, workspaceWriteProfile } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import { locateBwrap } from '../backends/linux/bwrap-locate.js';
import { probeBwrap } from '../backends/linux/bwrap-probe.js';
import { type CliDeps, EXIT } from './cli-io.js';
import { humanError } from './json-output.js';
import { formatTable } from './table.js';

type Status = 'ok' | 'FAIL' | 'info';

interface Check {
  name: string;
  status: Status;
  detail: string;
}

/**
 * `fs-sandbox doctor`: can this machine run sandboxed file operations? Every row is a real check
 * (the namespace row runs bwrap, the last row runs a sandboxed write and read through the broker);
 * exit 0 only when sandboxed operations work.
 */
export function registerDoctorCommand(program: Command, deps: CliDeps): void {
  program
    .command('doctor')
    .description('check that sandboxed operations can run here (exit 0 only if they can)')
    .action(async () => {
      const os = currentHostOs();
      const checks: Check[] = [
        { name: 'os', status: 'info', detail: `${os} (${process.platform} ${release()}, ${process.arch})` },
        { name: 'node', status: 'info', detail: `${await realpath(process.execPath)} ${process.version}` },
        await helperBundleCheck(deps),
        ...(await backendChecks(os, deps)),
      ];
      const operation = await sandboxedOperationCheck(os, deps);
      checks.push(operation);
      deps.io.stdout.write(
        `${formatTable(
          ['check', 'status', 'detail'],
          checks.map((check) => [check.name, check.status, check.detail]),
        )}\n`,
      );
      if (checks.some((check) => check.status === 'FAIL')) deps.setExitCode(EXIT.failed);
    });
}

async function helperBundleCheck(deps: CliDeps): Promise<Check> {
  try {
    return { name: 'helper bundle', status: 'ok', detail: await realpath(helperBundlePath(deps.io.env)) };
  } catch (error) {
    return { name: 'helper bundle', status: 'FAIL', detail: humanError(error).trim() };
  }
}

async function backendChecks(os: HostOs, deps: CliDeps): Promise<Check[]> {
  if (os !== 'linux') return [{ name: 'backend', status: 'info', detail: `see the sandboxed operation row` }];
  let bwrap: string;
  try {
    bwrap = await locateBwrap(deps.io.env);
  } catch (error) {
    return [{ name: 'backend', status: 'FAIL', detail: humanError(error).trim() }];
  }
  const probe = await probeBwrap(bwrap, await realpath(process.execPath));
  return [
    { name: 'backend', status: 'ok', detail: `bwrap ${bwrap} (${probe.version ?? 'version unknown'})` },
    {
      name: 'user namespaces',
      status: probe.namespaces.usable ? 'ok' : 'FAIL',
      detail: probe.namespaces.detail,
    },
  ];
}

/** A real sandboxed write and read-back in a temporary workspace. */
async function sandboxedOperationCheck(os: HostOs, deps: CliDeps): Promise<Check> {
  const name = 'sandboxed operation';
  const workspace = await realpath(await mkdtemp(join(tmpdir(), 'fs-sandbox-doctor-')));
  const broker = deps.createBroker({ env: deps.io.env });
  try {
    const root = nativeToPathUri(workspace, os);
    const sandbox = {
      permissions: workspaceWriteProfile({ writableRoots: [root] }),
      cwd: root,
      workspaceRoots: [root],
      windowsSandboxLevel: os === 'windows' ? 'restricted-token' : 'disabled',
    };
    const path = nativeToPathUri(join(workspace, 'probe.txt'), os);
    const started = performance.now();
    const { info } = await broker.callWithInfo('fs/writeFile', { path, dataBase64: 'b2s=', sandbox });
    const read = (await broker.call('fs/readFile', { path, sandbox })) as { dataBase64: Uint8Array };
    const elapsed = Math.round((performance.now() - started) / 2);
    if (!info.sandboxed || Buffer.from(read.dataBase64).toString() !== 'ok') {
      return { name, status: 'FAIL', detail: 'the write did not run sandboxed or did not read back' };
    }
    return { name, status: 'ok', detail: `write + read under ${info.backend} (~${elapsed} ms each)` };
  } catch (error) {
    return { name, status: 'FAIL', detail: humanError(error).trim() };
  } finally {
    await broker.close();
    await rm(workspace, { recursive: true, force: true });
  }
}
