import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/build.js';

/**
 * Every type is declared once across the packages' sources. Wire types come from the method
 * table's schemas (policy method-table.ts) and are imported everywhere else; an interface of the
 * same name declared in a second file is how a wire type used to drift from its schema.
 */

const DECLARATION = /^(?:export\s+)?(?:declare\s+)?(?:interface|type|class|enum)\s+([A-Z][A-Za-z0-9_]*)\b/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Type name -> the files that declare it, for every name declared in more than one. */
function declaredTwice(files: readonly string[], read: (file: string) => string): Map<string, string[]> {
  const where = new Map<string, string[]>();
  for (const file of files) {
    for (const match of read(file).matchAll(DECLARATION)) {
      const name = match[1] as string;
      where.set(name, [...(where.get(name) ?? []), file]);
    }
  }
  return new Map([...where].filter(([, declaredIn]) => declaredIn.length > 1));
}

describe('type declarations', () => {
  it('declare every name once in packages/*/src', () => {
    // The per-platform Bun helper packages carry a binary and no source.
    const files = readdirSync(join(REPO, 'packages'))
      .filter((name) => existsSync(join(REPO, 'packages', name, 'src')))
      .flatMap((name) => sourceFiles(join(REPO, 'packages', name, 'src')));
    expect(files.length).toBeGreaterThan(100);
    const twice = declaredTwice(files, (file) => readFileSync(file, 'utf8'));
    const report = [...twice].map(
      ([name, declaredIn]) => `${name}: ${declaredIn.map((f) => relative(REPO, f)).join(', ')}`,
    );
    expect(report).toEqual([]);
  });

  it('catches a second declaration of a wire type', () => {
    const sources: Record<string, string> = {
      'a.ts': "export interface WalkResult { entries: string[] }\nexport type Mode = 'a';\n",
      'b.ts': 'interface WalkResult {\n  entries: string[];\n}\n',
    };
    expect([...declaredTwice(Object.keys(sources), (file) => sources[file] as string).keys()]).toEqual([
      'WalkResult',
    ]);
  });
});
