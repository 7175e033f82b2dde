import type { HelperRequest } from '@fs-sandbox/helper';
import {
  carriesRequests,
  descriptorOf,
  type HostOs,
  innerRequestsOf,
  isHelperMethod,
  type MethodDescriptor,
  parentPath,
  type TouchedPath,
} from '@fs-sandbox/policy';
import { nodeCrypto } from './lazy-crypto.js';

/**
 * A helper killed mid-write (timeout, cancel, crash) cannot remove its temporary file. Requests that
 * create one carry a random tag its temporary names include (policy temp-tag.ts); after such a
 * kill the broker runs `fs/removeTemps` with that tag, under the same sandbox, where the write could
 * have left them. Every path a method writes (`write` access in the method table) is replaced
 * atomically through a temporary file beside it, so that file's directory is cleaned; a recursive
 * request (a tree copy) may have left them anywhere below the path, so the whole tree is too.
 */

export interface TempScope {
  /** Native directory to clean. */
  path: string;
  recursive: boolean;
}

export function newTempTag(): string {
  return nodeCrypto().randomBytes(12).toString('hex');
}

/**
 * Where a killed helper may have left temporary files, or nothing for a method that writes none.
 * A recursive request whose source turns out to be a file (or a link) writes that one file through
 * a temporary beside the destination, so its directory is cleaned as well as the tree below it.
 */
export function tempScopesOf(request: HelperRequest, os: HostOs): TempScope[] {
  const params = request.params as Record<string, unknown>;
  // A batch's operations write where each of them would on its own, all under the batch's one tag.
  if (carriesRequests(request.operation)) {
    return innerRequestsOf(request.operation, params).flatMap((inner) =>
      isHelperMethod(inner.method)
        ? tempScopesOf({ operation: inner.method, params: inner.params } as HelperRequest, os)
        : [],
    );
  }
  const descriptor = descriptorOf(request.operation);
  if (descriptor.innerPaths !== undefined) return innerTempScopes(descriptor.innerPaths, params, os);
  const written = Object.entries(descriptor.paths).find(([, access]) => access === 'write');
  if (written === undefined) return [];
  const path = params[written[0]] as string;
  const parent = parentPath(os, path);
  const scopes: TempScope[] = parent === null ? [] : [{ path: parent, recursive: false }];
  if (params.recursive === true || descriptor.writesTree === true) scopes.push({ path, recursive: true });
  return scopes;
}

/**
 * A method whose files are inside a param (a patch): each written file's directory, once. A file
 * whose directory the helper had still to create is covered by that directory's own entry.
 */
function innerTempScopes(
  innerPaths: NonNullable<MethodDescriptor['innerPaths']>,
  params: Record<string, unknown>,
  os: HostOs,
): TempScope[] {
  const touched = (innerPaths as (params: unknown, os: HostOs) => TouchedPath[])(params, os);
  const directories = new Set<string>();
  for (const { path, access } of touched) {
    const parent = access === 'write' ? parentPath(os, path) : null;
    if (parent !== null) directories.add(parent);
  }
  return [...directories].map((path) => ({ path, recursive: false }));
}

/** The clean-up request for a killed helper's temporary files (sent with the same guard). */
export function removeTempsRequest(scope: TempScope, tag: string): HelperRequest<'fs/removeTemps'> {
  return {
    operation: 'fs/removeTemps',
    params: { path: scope.path, tag, recursive: scope.recursive },
    sandboxed: true,
  };
}
