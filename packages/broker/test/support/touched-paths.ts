import {
  descriptorOf,
  type HelperMethod,
  type HelperRuntimeReads,
  type HostOs,
  type PathGuard,
  type PermissionProfile,
  pathUriToNative,
  type TouchedPath,
} from '@fs-sandbox/policy';
import { precheckPhysical, precheckRequest } from '../../src/core/precheck.js';

/**
 * The pre-checks driven by wire-style params (only the path fields given), with the touched paths
 * the broker's parse would hand them: each path param of the method table, native, with its access.
 */
function pathsFor(method: HelperMethod, params: Record<string, unknown>, os: HostOs): TouchedPath[] {
  return Object.entries(descriptorOf(method).paths)
    .filter(([field]) => typeof params[field] === 'string')
    .map(([field, access]) => ({ field, access, path: pathUriToNative(params[field] as string, os) }));
}

export function precheckRequestFor(
  method: HelperMethod,
  params: Record<string, unknown>,
  profile: PermissionProfile,
  os: HostOs,
  runtime: HelperRuntimeReads | null = null,
): void {
  precheckRequest(pathsFor(method, params, os), profile, os, undefined, runtime);
}

export function precheckPhysicalFor(
  method: HelperMethod,
  params: Record<string, unknown>,
  guard: PathGuard,
  os: HostOs,
): void {
  precheckPhysical(pathsFor(method, params, os), guard, os);
}
