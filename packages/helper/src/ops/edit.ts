import { assertEditBounds, FsError, LIMITS, lineBreakKindOf } from '@fs-sandbox/policy/core';
import { atomicWrite } from '../atomic-write.js';
import { displayPath } from '../display-path.js';
import { modeForReplacement } from '../file-mode.js';
import { sha256OfBytes } from '../hash-file.js';
import { openRegularFile } from '../open-regular-file.js';
import type { Operation } from '../operation.js';
import { optionalBoolean, optionalMatch, pathParam } from '../params.js';
import { sizeText } from '../size-text.js';
import { decodeText, encodeText, textTooLarge } from '../text-codec.js';
import { applyEdits, type TextEdit } from '../text-edits.js';
import { withWriteTarget } from '../write-target.js';
import { readTextBytes } from './read-text-file.js';
import { assertExpectedHash, SHA256_HEX, unchangedSince } from './write-file.js';

function parseEdits(raw: Record<string, unknown>): TextEdit[] {
  const value = raw.edits;
  if (!Array.isArray(value)) {
    throw new FsError('invalid_params', 'invalid type for `edits`: expected an array of edits');
  }
  const edits = value.map((edit: unknown, index) => {
    const { oldText, newText, replaceAll } = (edit ?? {}) as Record<string, unknown>;
    if (typeof oldText !== 'string' || typeof newText !== 'string') {
      throw new FsError('invalid_params', `edits[${index}] needs string \`oldText\` and \`newText\``);
    }
    if (replaceAll !== undefined && replaceAll !== null && typeof replaceAll !== 'boolean') {
      throw new FsError(
        'invalid_params',
        `invalid type for \`edits[${index}].replaceAll\`: expected a boolean`,
      );
    }
    return { oldText, newText, replaceAll: replaceAll === true };
  });
  assertEditBounds({ edits });
  return edits;
}

const lf = (text: string) => text.replaceAll('\r\n', '\n');

/** Loaded only by an edit: the diff library is not on any other operation's start-up path. */
async function unifiedDiff(path: string, before: string, after: string): Promise<string> {
  const { createTwoFilesPatch, FILE_HEADERS_ONLY } = await import('diff');
  const shown = displayPath(path);
  return createTwoFilesPatch(shown, shown, before, after, undefined, undefined, {
    headerOptions: FILE_HEADERS_ONLY,
  });
}

export const editOperation: Operation<'fs/edit'> = {
  // Every param is checked before the disk is touched.
  parse: (raw, os) => ({
    path: pathParam(raw, 'path', os),
    edits: parseEdits(raw),
    expectedSha256: optionalMatch(raw, 'expectedSha256', SHA256_HEX, '64 hexadecimal digits'),
    dryRun: optionalBoolean(raw, 'dryRun', false),
  }),
  /**
   * Reads the text through its opened parent, after the guard has checked the name's physical
   * location (as a write does), applies the edits in memory and publishes the result atomically,
   * refused (hash_mismatch) if the file changed since it was read: an edit never overwrites a
   * change it did not see. A CRLF file is matched and written back with CRLF while the texts use
   * LF; encoding, BOM and mode are kept.
   */
  run: ({ path, edits, expectedSha256, dryRun }, context) =>
    withWriteTarget(
      path,
      { os: context.os, refuseSymlinkLeaf: context.sandboxed, guard: context.guard },
      async (target) => {
        if (target.existing === null) {
          throw new FsError('not_found', `No such file or directory: ${displayPath(path)}`);
        }
        const file = await openRegularFile(target.access, {
          noFollow: true,
          guard: context.guard,
          display: path,
        });
        const bytes = await readTextBytes(file, path).finally(() => file.handle.close());
        const sha256Before = await sha256OfBytes(bytes);
        if (expectedSha256 != null) assertExpectedHash(path, sha256Before, expectedSha256);
        const decoded = decodeText(bytes, path);
        const crlf = lineBreakKindOf(decoded.text) === 'crlf';
        const before = crlf ? lf(decoded.text) : decoded.text;
        const applied = applyEdits(
          path,
          before,
          crlf
            ? edits.map((edit) => ({ ...edit, oldText: lf(edit.oldText), newText: lf(edit.newText) }))
            : edits,
        );
        if (applied.text === before) {
          throw new FsError(
            'no_change',
            `the edits leave ${displayPath(path)} unchanged; nothing was written`,
          );
        }
        const output = encodeText(
          crlf ? applied.text.replaceAll('\n', '\r\n') : applied.text,
          decoded.encoding,
          decoded.bom,
        );
        if (output.length > LIMITS.textMaxBytes) {
          throw textTooLarge(path, `would be ${sizeText(output.length)} after the edits`);
        }
        if (!dryRun) {
          await atomicWrite(target, {
            os: context.os,
            createOnly: false,
            mode: modeForReplacement(target.existing),
            durable: true,
            fill: (handle) => handle.writeAll(output),
            beforePublish: unchangedSince(target, file.stats),
          });
        }
        return {
          response: {
            sha256Before,
            sha256After: await sha256OfBytes(output),
            replacements: applied.replacements,
            diff: await unifiedDiff(path, before, applied.text),
          },
        };
      },
    ),
};
