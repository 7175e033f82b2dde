import { spawn } from 'node:child_process';
import { ServeProcess } from '../fixtures/conformance/serve-process.js';
import { codexBinary } from './codex-binary.js';

/**
 * The reference Codex exec-server (`codex exec-server --listen stdio` of the pinned @openai/codex)
 * as a child spoken to like `fs-sandbox serve`. Under a `codexHome` in TMPDIR it only warns on
 * stderr that it places no PATH aliases there, which these comparisons never use.
 */
export function startReferenceExecServer(cwd: string, codexHome: string): ServeProcess {
  const child = spawn(codexBinary() as string, ['exec-server', '--listen', 'stdio'], {
    cwd,
    env: { PATH: '/usr/bin:/bin', CODEX_HOME: codexHome },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return new ServeProcess(child);
}
