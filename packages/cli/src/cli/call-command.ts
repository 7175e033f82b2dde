import { FS_METHODS, isFsMethod } from '@fs-sandbox/broker/internal';
import { FsError, LIMITS, type ParamsIn, RPC_CODES, toWireError, type WireError } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import {
  addBrokerOptions,
  addRequireSandboxOption,
  addUntrustedOption,
  type BrokerFlags,
  brokerOptionsFrom,
} from './broker-options.js';
import { type CliDeps, EXIT } from './cli-io.js';
import { callErrorHint, writeResultJson, writeWireErrorJson } from './json-output.js';
import { readBoundedStdin } from './read-stdin.js';

/** The one server-answered method `call` runs too: the broker answers it without a helper. */
const EXPLAIN_ACCESS = 'fs/explainAccess';
const CALLABLE: readonly string[] = [...FS_METHODS, EXPLAIN_ACCESS];

/**
 * `fs-sandbox call <method> <params-json | ->`: one operation through the broker, for orchestrators
 * in any language. Params are exactly the JSON-RPC params (sandbox included); stdout gets the
 * result (exit 0) or `{"error":{code,message,data:{errorKind}}}` (exit 1).
 */
export function registerCallCommand(program: Command, deps: CliDeps): void {
  const command = program
    .command('call')
    .description('run one filesystem method; prints the JSON result or {"error":…} on stdout')
    .argument('<method>', `one of ${CALLABLE.join(', ')}`)
    .argument('<params>', 'params as JSON, or - to read them from stdin');
  addUntrustedOption(addRequireSandboxOption(command));
  addBrokerOptions(command).action(async (method: string, paramsText: string, flags: BrokerFlags) => {
    const broker = deps.createBroker(brokerOptionsFrom(flags, deps.io));
    try {
      if (!isFsMethod(method) && method !== EXPLAIN_ACCESS) {
        // The server's answer to an unknown method: -32601, which no error kind maps to.
        writeWireErrorJson(deps.io.stdout, unknownMethod(method));
        deps.setExitCode(EXIT.failed);
        return;
      }
      const text =
        paramsText === '-' ? await readBoundedStdin(deps.io.stdin, LIMITS.rpcMaxMessageBytes) : paramsText;
      const params = parseParamsJson(text);
      const result = isFsMethod(method)
        ? (await broker.callWithInfo(method, params, { timeoutMs: flags.timeout })).result
        : await broker.explainAccess(params as ParamsIn<typeof EXPLAIN_ACCESS>);
      writeResultJson(deps.io.stdout, result);
    } catch (error) {
      const wire = toWireError(error);
      writeWireErrorJson(deps.io.stdout, wire);
      const hint = callErrorHint(wire);
      if (hint !== null) deps.io.stderr.write(hint);
      deps.setExitCode(EXIT.failed);
    } finally {
      await broker.close();
    }
  });
}

/** -32601 with kind `invalid_request`, as `serve` answers it, naming the methods there are. */
function unknownMethod(method: string): WireError {
  return {
    code: RPC_CODES.methodNotFound,
    message: `unknown method \`${method}\`; one of ${CALLABLE.join(', ')}`,
    data: { errorKind: 'invalid_request' },
  };
}

function parseParamsJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new FsError('invalid_request', `params are not valid JSON: ${(error as Error).message}`);
  }
}
