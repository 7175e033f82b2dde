import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/build.js';

/**
 * No import cycles among the packages' sources, type-only imports included: a cycle makes the
 * order modules initialise in depend on which one is loaded first, and hides which file owns a
 * type. A type two modules need goes into a leaf file both import (`policy/src/touched-path.ts`,
 * `cli/src/server/server-call-context.ts`). A few hundred files read and matched: tens of
 * milliseconds, no dependency.
 */

/** Relative import and export specifiers: `import … from './x.js'`, `export * from '../y.js'`, `import('./z.js')`. */
const RELATIVE_SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"\n]+)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Each source file and the source files it imports (a `.js` specifier names its `.ts` source). */
export function importGraph(files: readonly string[], read: (file: string) => string): Map<string, string[]> {
  const known = new Set(files);
  return new Map(
    files.map((file) => [
      file,
      [...read(file).matchAll(RELATIVE_SPECIFIER)]
        .map((match) => resolve(dirname(file), (match[1] as string).replace(/\.js$/, '.ts')))
        .filter((target) => known.has(target)),
    ]),
  );
}

/** The strongly connected components of more than one file, or of one file importing itself (Tarjan). */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    order.set(file, order.size);
    low.set(file, order.get(file) as number);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file) as number, order.get(next) as number));
      }
    }
    if (low.get(file) !== order.get(file)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(member);
      if (member === file) break;
    }
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!order.has(file)) visit(file);
  return cycles;
}

describe('imports', () => {
  it('form no cycle in packages/*/src', () => {
    const files = readdirSync(join(REPO, 'packages'))
      .map((name) => join(REPO, 'packages', name, 'src'))
      .filter((dir) => existsSync(dir))
      .flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(200);
    const cycles = importCycles(importGraph(files, (file) => readFileSync(file, 'utf8')));
    expect(cycles.map((cycle) => cycle.map((file) => relative(REPO, file)).join(' → '))).toEqual([]);
  });

  it('finds a cycle, through type imports and re-exports too', () => {
    const sources: Record<string, string> = {
      '/p/a.ts': "import type { B } from './b.js';",
      '/p/b.ts': "export * from './c.js';",
      '/p/c.ts': "const a = await import('./a.js');",
      '/p/leaf.ts': '',
      '/p/d.ts': "import { x } from './leaf.js';\nimport { y } from 'node:fs';",
    };
    const graph = importGraph(Object.keys(sources), (file) => sources[file] as string);
    expect(importCycles(graph)).toEqual([['/p/a.ts', '/p/b.ts', '/p/c.ts']]);
  });
});
