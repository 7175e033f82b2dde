import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const srcDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');

/** Every module reachable from core.ts by relative imports, with its import specifiers. */
function reachable(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    const text = readFileSync(join(srcDir, file), 'utf8');
    const specifiers = [...text.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1] as string);
    seen.set(file, specifiers);
    for (const s of specifiers) {
      if (s.startsWith('./') || s.startsWith('../'))
        visit(normalize(join(dirname(file), s.replace(/\.js$/, '.ts'))));
    }
  };
  visit(entry);
  return seen;
}

describe.each([
  ['core.ts', 'the helper bundle must stay small and fast'],
  ['seccomp/index.ts', 'a launcher inside the sandbox builds its filter with it'],
])('zero-dependency entry point %s', (entry) => {
  it('reaches no package import at all', () => {
    const modules = reachable(entry);
    expect(modules.size).toBeGreaterThan(3);
    for (const [file, specifiers] of modules) {
      for (const s of specifiers)
        expect(s.startsWith('.') || s.startsWith('node:') ? s : `${file}: ${s}`).toBe(s);
    }
  });
});
