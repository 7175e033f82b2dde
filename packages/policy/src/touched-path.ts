/**
 * The shapes a request's paths take once parsed, in a leaf file: the method table declares which
 * access each path param needs, its hooks (a patch's inner paths) return touched paths, and the
 * conversion to helper params builds them; none of those may import another for these types (that
 * was an import cycle through the method table).
 */

/** How a request uses a path: `write` creates or replaces a file, `create` only makes new names. */
export type PathAccess = 'read' | 'write' | 'create' | 'remove';

/** A path a request touches, native, with the access the method table gives it. */
export interface TouchedPath {
  field: string;
  path: string;
  access: PathAccess;
}
