import { descriptorOf, type HelperMethod, type HostOs, type PatchPolicyScope } from '@fs-sandbox/policy';
import type { ParsedRequest } from './parsed-request.js';
import type { Route } from './routing.js';

/**
 * The method's own decision before any helper runs (the method table's `admit`; the patch safety
 * assessment): null to go ahead, or the result to answer instead. It sees the route's policy: a
 * context that runs in-process isolates nothing (or leaves it to the caller, or grants everything),
 * a sandboxed one is a managed profile the platform sandbox will confine.
 */
export function admitRequest<M extends HelperMethod>(request: ParsedRequest<M>, os: HostOs): unknown {
  return admitOperation(request.method, request.helper.params, request.route, os);
}

/**
 * The same decision for one method's parsed params under a route: a batch asks it of each of its
 * operations, under the batch's one route, so an operation is admitted exactly as it would be alone.
 */
export function admitOperation(method: HelperMethod, params: unknown, route: Route, os: HostOs): unknown {
  const admit = descriptorOf(method).admit as
    | ((params: unknown, scope: PatchPolicyScope, os: HostOs) => unknown)
    | undefined;
  if (admit === undefined) return null;
  return admit(params, scopeOf(route), os);
}

function scopeOf(route: Route): PatchPolicyScope {
  if (route.kind === 'in-process') return { kind: 'unisolated' };
  return {
    kind: 'managed',
    profile: route.context.profile,
    windowsSandboxLevel: route.context.windowsSandboxLevel,
  };
}
