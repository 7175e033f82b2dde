import { FsError, LIMITS } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import type { CliDeps } from './cli-io.js';
import { addJsonOption, writeResultJson } from './json-output.js';
import { readBoundedStdinBytes } from './read-stdin.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';

/** `--mode` is the file's permission bits (the `permissions` param), not the write mode. */
interface WriteFlags extends ShortcutFlags {
  json?: boolean;
  create?: boolean;
  allowEmpty?: boolean;
  expectSha256?: string;
  mode?: string;
}

/**
 * `fs-sandbox write PATH [TEXT]`: writes TEXT, or stdin when TEXT is absent, atomically. Stdin is
 * bounded like one JSON-RPC message, since the bytes travel base64-encoded in the params. An empty
 * stdin is refused unless `--allow-empty`: a forgotten pipe must not truncate a file.
 */
export function registerWriteCommand(program: Command, deps: CliDeps): void {
  addJsonOption(shortcutCommand(program, 'write'))
    .description('write a file from TEXT or stdin (fs/writeFile)')
    .argument('<path>', 'native path')
    .argument('[text]', 'content (default: read stdin)')
    .option('--create', 'fail (file_already_exists) if the file already exists')
    .option('--expect-sha256 <hex>', 'fail unless the file currently has this SHA-256 (expectedSha256)')
    .option('--allow-empty', 'allow writing an empty file from an empty stdin')
    .option('--mode <octal>', 'permission bits, e.g. 0600 (default: new file 0666 under the umask)')
    .action((path: string, text: string | undefined, flags: WriteFlags) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const data =
          text === undefined
            ? await readBoundedStdinBytes(deps.io.stdin, LIMITS.rpcMaxMessageBytes)
            : Buffer.from(text, 'utf8');
        if (text === undefined && data.byteLength === 0 && flags.allowEmpty !== true) {
          throw new FsError(
            'invalid_params',
            'stdin is empty; pass --allow-empty to write an empty file, or give TEXT',
          );
        }
        const params = {
          path: uri(path),
          dataBase64: data.toString('base64'),
          sandbox,
          mode: flags.create ? ('create' as const) : ('overwrite' as const),
          ...(flags.expectSha256 === undefined ? {} : { expectedSha256: flags.expectSha256 }),
          ...(flags.mode === undefined ? {} : { permissions: flags.mode }),
        };
        const result = await broker.call('fs/writeFile', params, { timeoutMs });
        if (flags.json) writeResultJson(deps.io.stdout, result);
      }),
    );
}
