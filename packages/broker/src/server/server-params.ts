import { assertReadBlockLength, FsError, LIMITS } from '@fs-sandbox/policy';

/**
 * Parameter checks for the methods the server answers itself (initialize and the read-handle
 * methods); the filesystem methods are validated by the broker. Messages follow the serde wording
 * the reference sends (`missing field `x``, `invalid number`, `unknown variant …`), with the
 * reference's codes: shape errors are invalid_params (-32602), limit violations invalid_request.
 */

export interface InitializeParams {
  clientName: string;
}

export interface OpenParams {
  handleId: string;
  path: unknown;
  sandbox: unknown;
}

export interface ReadBlockParams {
  handleId: string;
  offset: number;
  len: number;
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

/** A u64 on the wire; JSON numbers past 2^53 cannot be represented exactly, so they are refused too. */
function requiredUnsigned(fields: Record<string, unknown>, name: string): number {
  const value = fields[name];
  if (value === undefined) throw invalidParams(`missing field \`${name}\``);
  if (typeof value !== 'number') throw invalidParams(`invalid type: ${describe(value)}, expected u64`);
  if (!Number.isSafeInteger(value) || value < 0) throw invalidParams('invalid number');
  return value;
}

function handleId(fields: Record<string, unknown>): string {
  const id = requiredString(fields, 'handleId');
  const bytes = Buffer.byteLength(id, 'utf8');
  if (bytes < 1 || bytes > LIMITS.handleIdMaxBytes) {
    throw new FsError(
      'invalid_request',
      `file handle id must be between 1 and ${LIMITS.handleIdMaxBytes} bytes`,
    );
  }
  return id;
}

export function parseInitializeParams(params: unknown): InitializeParams {
  return { clientName: requiredString(record(params), 'clientName') };
}

export function parseOpenParams(params: unknown): OpenParams {
  const fields = record(params);
  const id = handleId(fields);
  if (fields.path === undefined) throw invalidParams('missing field `path`');
  const mode = fields.mode;
  if (mode === 'replace') {
    // Write streaming would need a sandboxed writer that outlives one helper run; until that
    // exists the server refuses it outright rather than writing outside the helper.
    throw new FsError(
      'invalid_request',
      'fs/open mode `replace` (write streaming) is not supported by fs-sandbox; use fs/writeFile',
    );
  }
  if (mode !== undefined && mode !== null && mode !== 'read') {
    const shown =
      typeof mode === 'string'
        ? `unknown variant \`${mode.slice(0, 64)}\``
        : `invalid type: ${describe(mode)}`;
    throw invalidParams(`${shown}, expected \`read\` or \`replace\``);
  }
  return { handleId: id, path: fields.path, sandbox: fields.sandbox ?? null };
}

export function parseReadBlockParams(params: unknown): ReadBlockParams {
  const fields = record(params);
  const id = handleId(fields);
  const offset = requiredUnsigned(fields, 'offset');
  const len = requiredUnsigned(fields, 'len');
  assertReadBlockLength(len);
  return { handleId: id, offset, len };
}

export function parseCloseParams(params: unknown): { handleId: string } {
  return { handleId: handleId(record(params)) };
}
