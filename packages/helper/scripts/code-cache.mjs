// The helper program with a V8 code cache built in. Every helper process would otherwise compile the
// bundle (~2 ms) and then, function by function, all the code one request runs (~1-2 ms more). The
// build runs the program once on a representative request (a 1 KiB fs/readFile with a freshness
// check and a mount check, the path of every request) and saves V8's code cache; the shipped file
// compiles its program from that cache. If this node rejects the cache (another version, other
// V8 flags such as a warm spare's --no-lazy), V8 just compiles the source: never a behaviour change.
// A vm script cannot use import() in node 20 (not without --experimental-vm-modules, and not at all
// from a code cache), so the program is bundled with import() turned into require (build.mjs).

import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TRAINER = fileURLToPath(new URL('./code-cache-trainer.cjs', import.meta.url));

/** The CommonJS module wrapper, so the program runs exactly as `node helper.cjs` would run it. */
const wrap = (body) => `(function (exports, require, module, __filename, __dirname) {${body}\n})`;

/** The shipped program (a Buffer): a small loader, then the source and the cache as raw bytes. */
export function withCodeCache(body) {
  const source = wrap(body);
  const work = mkdtempSync(join(tmpdir(), 'fs-sandbox-helper-cache-'));
  try {
    const sourceFile = join(work, 'program.cjs');
    const cacheFile = join(work, 'program.cache');
    const data = join(work, 'one-kib.bin');
    writeFileSync(sourceFile, source);
    writeFileSync(data, Buffer.alloc(1024, 7));
    const root = lstatSync(work, { bigint: true });
    const request = {
      operation: 'fs/readFile',
      params: { path: pathToFileURL(data).href, sandbox: null },
      freshness: [{ path: work, dev: root.dev.toString(), ino: root.ino.toString() }],
    };
    execFileSync(process.execPath, [TRAINER, sourceFile, cacheFile, '--expect-mounts', '/'], {
      input: `${JSON.stringify(request)}\n`,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    return programFile(Buffer.from(source, 'utf8'), readFileSync(cacheFile));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The file node runs: a loader that reads the file again and compiles the program from the bytes
 * kept in comments at its end. Comments, not string literals: V8 skips a comment at memcpy speed
 * but scans a 100 KB string literal for ~0.7 ms, and raw bytes need no base64 decoding (~0.4 ms).
 * A comment ends at the first `*` `/` pair, so the bytes are split there into consecutive
 * comments; node decodes the file as UTF-8 to compile it, which cannot create or hide such a pair
 * (both are ASCII, never part of a multi-byte sequence).
 */
function programFile(source, cache) {
  const parts = { source: commentSegments(source), cache: commentSegments(cache) };
  // Offsets are padded to a fixed width, so writing them does not move what they point at.
  const offsets = (segments, start) => {
    const ranges = [];
    let at = start;
    for (const segment of segments) {
      ranges.push(`[${String(at + 2).padStart(9)}, ${String(at + 2 + segment.length).padStart(9)}]`);
      at += segment.length + 4;
    }
    return { text: `[${ranges.join(', ')}]`, end: at };
  };
  const loaderFor = (sourceRanges, cacheRanges) =>
    [
      "'use strict';",
      '// fs-sandbox helper. The program and the V8 code cache made for it at build time are the raw',
      '// bytes in the comments at the end of this file (packages/helper/scripts/code-cache.mjs). A',
      '// cache this node rejects just means a normal compile.',
      "const { readFileSync } = require('node:fs');",
      "const { Script } = require('node:vm');",
      'const file = readFileSync(__filename);',
      'const bytes = (ranges) => Buffer.concat(ranges.map(([start, end]) => file.subarray(start, end)));',
      `const source = bytes(${sourceRanges}).toString('utf8');`,
      `const cachedData = bytes(${cacheRanges});`,
      'new Script(source, { filename: __filename, cachedData })',
      '  .runInThisContext()(exports, require, module, __filename, __dirname);',
      '',
    ].join('\n');
  // The loader's length does not depend on the offset values (fixed width), only on their count.
  const placeholder = (segments) => offsets(segments, 0).text;
  const loaderLength = Buffer.byteLength(loaderFor(placeholder(parts.source), placeholder(parts.cache)));
  const sourceRanges = offsets(parts.source, loaderLength);
  const cacheRanges = offsets(parts.cache, sourceRanges.end);
  const loader = Buffer.from(loaderFor(sourceRanges.text, cacheRanges.text));
  const comments = [...parts.source, ...parts.cache].flatMap((segment) => [
    Buffer.from('/*'),
    segment,
    Buffer.from('*/'),
  ]);
  return Buffer.concat([loader, ...comments]);
}

/** `bytes` cut between every `*` and a following `/`, so no piece contains the pair that ends a comment. */
function commentSegments(bytes) {
  const segments = [];
  let start = 0;
  for (let at = bytes.indexOf('*/'); at !== -1; at = bytes.indexOf('*/', at + 1)) {
    segments.push(bytes.subarray(start, at + 1));
    start = at + 1;
  }
  segments.push(bytes.subarray(start));
  return segments;
}
