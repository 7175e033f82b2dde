import type { HelperRequest } from '@fs-sandbox/helper';
import {
  type HelperMethod,
  type HostOs,
  parseForHelper,
  type SandboxContext,
  type TouchedPath,
} from '@fs-sandbox/policy';
import { type Route, routeFor } from './routing.js';

/**
 * A request parsed once, at the broker's boundary, into everything later steps need: the pre-check
 * reads `paths`, routing has decided `route`, and `helper` is what the helper receives. Nothing
 * after this point parses a URI, decodes base64 or validates a field again.
 */
export interface ParsedRequest<M extends HelperMethod = HelperMethod> {
  method: M;
  paths: TouchedPath[];
  route: Route;
  helper: HelperRequest<M>;
}

/**
 * Parses `raw` params of `method` and resolves its sandbox context (the broker's `serverPolicy`
 * when it carries none). Bad params, bad base64 and bad contexts (including the cwd errors) fail
 * here, before any helper exists.
 */
export function parseRequest<M extends HelperMethod>(
  method: M,
  raw: unknown,
  os: HostOs,
  serverPolicy: SandboxContext | null = null,
): ParsedRequest<M> {
  const { params, paths, sandbox } = parseForHelper(method, raw, os);
  const route = routeFor(sandbox, os, serverPolicy);
  return {
    method,
    paths,
    route,
    helper: { operation: method, params, ...(route.kind === 'sandbox' ? { sandboxed: true } : {}) },
  };
}
