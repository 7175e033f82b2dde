import { FsError, type HostOs, nativeToPathUri } from '@fs-sandbox/policy';

/**
 * What the reference says of a path field that is no URI at all (a native or relative path). The
 * wire keeps it word for word, with the field in `data.field`: a client compares it.
 */
const NOT_A_URI = 'invalid URI: relative URL without a base';

/** A Windows path (`C:\\w`, `C:/w`), whose drive letter a URI parser reads as a scheme. */
const DRIVE_PATH = /^[A-Za-z]:[\\/]/;

/**
 * The same refusal as a library user reads it: `message` is what a stack trace or a log shows, so
 * it names the field and the URI to pass instead (the path's own `file:` form when it is absolute),
 * with the wire's words after it. The kind and `extra` (`field`) stay as they were. Anything else
 * passes through unchanged.
 */
export function forLibraryCaller(error: FsError, params: unknown, os: HostOs): FsError {
  const field = error.extra?.field;
  if (error.kind !== 'invalid_params' || typeof field !== 'string') return error;
  const value = valueAt(params, field);
  const nativePath = error.message === NOT_A_URI || (typeof value === 'string' && DRIVE_PATH.test(value));
  if (!nativePath) return error;
  let uri = 'file:///abs/path';
  if (typeof value === 'string') {
    try {
      uri = nativeToPathUri(value, os);
    } catch {
      // Relative: there is no URI to show but the shape of one.
    }
  }
  const given = typeof value === 'string' ? ` \`${value}\`` : '';
  return new FsError(
    'invalid_params',
    `\`${field}\` takes a file: URI, not a path${given}: pass ${uri} (url.pathToFileURL(path).href makes one) [${error.message}]`,
    error.extra,
  );
}

/** The value at a dotted field path (`sandbox.cwd`, `operations.0.path`), or undefined. */
function valueAt(params: unknown, field: string): unknown {
  let value = params;
  for (const key of field.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
