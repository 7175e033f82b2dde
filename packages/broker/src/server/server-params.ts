import {
  type CloseParams,
  FsError,
  type HandleMethod,
  type ParamsFor,
  parseParams,
  type ReadBlockParams,
} from '@fs-sandbox/policy';

/**
 * Parameter checks for the methods the server answers itself. The read-handle methods use their
 * schemas from @fs-sandbox/policy, like the filesystem methods the broker validates, so they refuse
 * unknown keys with the same messages; initialize, which the reference lets carry more than
 * `clientName`, is checked here. Messages follow the serde wording the reference sends.
 */

export interface InitializeParams {
  clientName: string;
}

/** What a read handle is opened with: the path and context stay as sent, for the broker to parse. */
export interface OpenHandleParams {
  handleId: string;
  path: unknown;
  sandbox: unknown;
}

function invalidParams(message: string): FsError {
  return new FsError('invalid_params', message);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a sequence';
  if (typeof value === 'number')
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  if (typeof value === 'boolean') return `boolean \`${value}\``;
  if (typeof value === 'string') return 'a string';
  return 'a map';
}

function record(params: unknown): Record<string, unknown> {
  if (params === undefined || params === null) return {};
  if (typeof params !== 'object' || Array.isArray(params)) {
    throw invalidParams(`invalid type: ${describe(params)}, expected a map`);
  }
  return params as Record<string, unknown>;
}

function requiredString(fields: Record<string, unknown>, name: string): string {
  const value = fields[name];
  if (value === undefined) throw invalidParams(`missing field \`${name}\``);
  if (typeof value !== 'string') throw invalidParams(`invalid type: ${describe(value)}, expected a string`);
  return value;
}

export function parseInitializeParams(params: unknown): InitializeParams {
  return { clientName: requiredString(record(params), 'clientName') };
}

/** A request without params is read as empty params, so the reply names the field it lacks. */
function handleParams<M extends HandleMethod>(method: M, params: unknown): ParamsFor<M> {
  return parseParams(method, params ?? {});
}

/**
 * fs/open: checked whole (unknown keys included) before anything runs. The path and sandbox go on
 * to the broker as the client sent them; its fs/openForRead parses them for the operation.
 */
export function parseOpenParams(params: unknown): OpenHandleParams {
  const { handleId } = handleParams('fs/open', params);
  const fields = params as Record<string, unknown>;
  return { handleId, path: fields.path, sandbox: fields.sandbox ?? null };
}

export function parseReadBlockParams(params: unknown): ReadBlockParams {
  return handleParams('fs/readBlock', params);
}

export function parseCloseParams(params: unknown): CloseParams {
  return handleParams('fs/close', params);
}
