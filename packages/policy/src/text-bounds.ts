import { FsError } from './error-kinds.js';
import { LIMITS } from './limits.js';

/** The line window of fs/readTextFile as a caller may send it (absent fields are null or undefined). */
export interface TextWindowParams {
  line?: number | null | undefined;
  limit?: number | null | undefined;
  head?: number | null | undefined;
  tail?: number | null | undefined;
  maxBytes?: number | null | undefined;
}

/**
 * fs/readTextFile's window rules: `line` is 1-based, `head` and `tail` each stand alone (they
 * exclude each other and `line`/`limit`). The broker checks them before any helper starts; the
 * helper again, for callers that pipe requests to it.
 */
export function assertTextWindow(params: TextWindowParams): void {
  const given = (value: number | null | undefined) => value !== undefined && value !== null;
  if (given(params.line) && params.line === 0) {
    throw new FsError('invalid_params', 'invalid value for `line`: lines are numbered from 1');
  }
  const windows = [
    given(params.line) || given(params.limit) ? 'line/limit' : null,
    given(params.head) ? 'head' : null,
    given(params.tail) ? 'tail' : null,
  ].filter((name) => name !== null);
  if (windows.length > 1) {
    throw new FsError(
      'invalid_params',
      `fs/readTextFile takes one window: ${windows.join(' and ')} cannot be combined`,
    );
  }
}

/** One replacement of fs/edit as the bounds need it. */
export interface EditBoundsParams {
  edits: readonly { oldText: string; newText: string }[];
}

/** fs/edit's bounds: 1 to LIMITS.editMaxEdits edits, each `oldText` non-empty, each text bounded. */
export function assertEditBounds(params: EditBoundsParams): void {
  const { edits } = params;
  if (edits.length === 0) throw new FsError('invalid_params', 'fs/edit needs at least one edit in `edits`');
  if (edits.length > LIMITS.editMaxEdits) {
    throw new FsError('invalid_params', `fs/edit takes at most ${LIMITS.editMaxEdits} edits per request`);
  }
  edits.forEach((edit, index) => {
    if (edit.oldText === '') {
      throw new FsError('invalid_params', `edits[${index}].oldText is empty: name the text to replace`, {
        editIndex: index,
      });
    }
    for (const field of ['oldText', 'newText'] as const) {
      if (Buffer.byteLength(edit[field], 'utf8') > LIMITS.editMaxTextBytes) {
        throw new FsError(
          'invalid_params',
          `edits[${index}].${field} is longer than ${LIMITS.editMaxTextBytes} bytes`,
          { editIndex: index },
        );
      }
    }
  });
}
