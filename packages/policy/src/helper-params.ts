import { decodeStrictBase64 } from './base64.js';
import { FsError } from './error-kinds.js';
import type { HostOs } from './host-os.js';
import { descriptorOf, type HelperMethod, type HelperParamsOf } from './method-table.js';
import { nativePathOf, type ParsedPathUri, pathUriToNative } from './path-uri.js';
import { parseParams } from './schemas/method-schemas.js';
import type { SandboxContext } from './schemas/sandbox-context.js';
import type { TouchedPath } from './touched-path.js';

export type { TouchedPath } from './touched-path.js';

/** A helper method's params parsed once, split into what the helper gets and what stays with the broker. */
export interface HelperBoundParams<M extends HelperMethod> {
  /** What the helper receives: native paths, decoded bytes, defaults applied, no sandbox context. */
  params: HelperParamsOf<M>;
  paths: TouchedPath[];
  sandbox: SandboxContext | null | undefined;
}

/**
 * Parses raw params of a helper method against its table entry and converts them for the helper:
 * each path param to this host's native path (from the URI parsed once, by the schema), the binary
 * param from base64 to bytes (decoded once; the bytes then travel beside the JSON and are never
 * re-encoded). Throws the FsError the params deserve.
 */
export function parseForHelper<M extends HelperMethod>(
  method: M,
  raw: unknown,
  os: HostOs,
): HelperBoundParams<M> {
  const parsed = parseParams(method, raw) as Record<string, unknown>;
  const descriptor = descriptorOf(method);
  const binaryField = descriptor.binary?.params;
  const paths: TouchedPath[] = [];
  const params: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(parsed)) {
    if (field === 'sandbox') continue;
    const access = descriptor.paths[field];
    if (access !== undefined) {
      if (value == null) continue;
      const path = nativePathOf(value as ParsedPathUri, os);
      paths.push({ field, path, access });
      params[field] = path;
    } else if (field === binaryField) {
      const decoded = decodeStrictBase64(value as string, method, field);
      params[field] = new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
    } else {
      params[field] = value;
    }
  }
  if (descriptor.contextCwd !== undefined) {
    defaultToContextCwd(
      method,
      descriptor.contextCwd,
      params,
      paths,
      parsed.sandbox as SandboxContext | null,
      os,
    );
  }
  if (descriptor.innerPaths !== undefined) {
    paths.push(...(descriptor.innerPaths as (p: unknown, os: HostOs) => TouchedPath[])(params, os));
  }
  return {
    params: params as HelperParamsOf<M>,
    paths,
    sandbox: parsed.sandbox as SandboxContext | null | undefined,
  };
}

/** A missing cwd param is the sandbox context's cwd; with neither, the request cannot say where its paths are. */
function defaultToContextCwd(
  method: HelperMethod,
  field: string,
  params: Record<string, unknown>,
  paths: TouchedPath[],
  sandbox: SandboxContext | null | undefined,
  os: HostOs,
): void {
  if (params[field] != null) return;
  if (!sandbox?.cwd) {
    throw new FsError('invalid_params', `${method} needs \`${field}\` or a sandbox context with a cwd`);
  }
  const path = pathUriToNative(sandbox.cwd, os);
  params[field] = path;
  paths.push({ field, path, access: 'read' });
}
