import { randomBytes } from 'node:crypto';
import type { HelperRequest } from '@fs-sandbox/helper';
import { type HostOs, nativeToPathUri, parentPath, pathUriToNative } from '@fs-sandbox/policy';

/**
 * A helper killed mid-write (timeout, cancel, crash) cannot remove its temporary file. Requests that
 * create one carry a random tag its temporary names include (policy temp-tag.ts); after such a
 * kill the broker runs `fs/removeTemps` with that tag, under the same sandbox, where the write could
 * have left them: the written file's directory, or a tree copy's whole destination.
 */

export interface TempScope {
  /** Directory URI to clean. */
  path: string;
  recursive: boolean;
}

export function newTempTag(): string {
  return randomBytes(12).toString('hex');
}

export function tempScopeOf(request: HelperRequest, os: HostOs): TempScope | null {
  const { params } = request;
  const parentOf = (uri: unknown): TempScope | null => {
    if (typeof uri !== 'string') return null;
    const parent = parentPath(os, pathUriToNative(uri, os));
    return parent === null ? null : { path: nativeToPathUri(parent, os), recursive: false };
  };
  switch (request.operation) {
    case 'fs/writeFile':
      return parentOf(params.path);
    case 'fs/copy':
      if (params.recursive === true && typeof params.destinationPath === 'string') {
        return { path: params.destinationPath, recursive: true };
      }
      return parentOf(params.destinationPath);
    default:
      return null;
  }
}

/** The clean-up request for a killed helper's temporary files. */
export function removeTempsRequest(request: HelperRequest, scope: TempScope, tag: string): HelperRequest {
  return {
    operation: 'fs/removeTemps',
    params: { path: scope.path, tag, recursive: scope.recursive, sandbox: request.params.sandbox },
  };
}
