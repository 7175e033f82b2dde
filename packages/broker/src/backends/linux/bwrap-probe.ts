import { execFile } from 'node:child_process';
import { ISOLATION_ARGS } from './bwrap-args.js';

export interface BwrapProbe {
  version: string | null;
  /** Whether bwrap could create the namespaces the helper runs in (a real, tiny sandboxed run). */
  namespaces: { usable: boolean; detail: string };
}

const PROBE_TIMEOUT_MS = 10_000;

/**
 * For `fs-sandbox doctor`: bwrap's version, and a real run of `node --version` under the same
 * isolation flags the helper gets (user namespaces may be disabled by the kernel or a container).
 */
export async function probeBwrap(bwrap: string, nodePath: string): Promise<BwrapProbe> {
  const version = await run(bwrap, ['--version']);
  const sandboxed = await run(bwrap, [
    ...ISOLATION_ARGS,
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--clearenv',
    '--',
    nodePath,
    '--version',
  ]);
  return {
    version: version.ok ? version.output : null,
    namespaces: sandboxed.ok
      ? { usable: true, detail: `ran node ${sandboxed.output} inside` }
      : { usable: false, detail: sandboxed.output },
  };
}

function run(file: string, args: string[]): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env: {}, timeout: PROBE_TIMEOUT_MS, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const output = `${stdout}${stderr}`.trim();
        resolve({ ok: error === null, output: output || (error?.message ?? '') });
      },
    );
  });
}
