import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/build.js';

/**
 * Every dependency a workspace package declares is used by that package: imported (or resolved) by
 * one of its files, run as a binary by one of its scripts, or, for an `@types/` package, the types
 * of a package it uses or of a `types` entry in its tsconfig. A dependency nothing uses still costs
 * an install, a lockfile entry and, for the broker, a read-only bind in every sandbox.
 */

const SECTIONS = ['dependencies', 'optionalDependencies', 'devDependencies'] as const;
const CODE_FILE = /\.(?:[cm]?ts|[cm]?js)$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git']);
/** `from 'x'`, `import 'x'`, `import('x')`, `require('x')`, `require.resolve('x')`. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*|\.resolve\s*\(\s*)(['"])([^'"\n]+)\1/g;

interface Manifest {
  bin?: string | Record<string, string>;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

function packageNameOf(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

/** The package's own files: everything under its folder except nested workspace packages. */
function ownFiles(dir: string, nested: ReadonlySet<string>): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && !nested.has(path)) files.push(...ownFiles(path, nested));
    } else files.push(path);
  }
  return files;
}

/** An esbuild `external: [...]` list: what a bundle leaves as run-time imports. */
const BUNDLE_EXTERNALS = /\bexternal:\s*\[([^\]]*)\]/g;

/**
 * The packages the files import, and those a build script leaves external to a bundle that
 * includes other workspace packages' sources (the CLI bundles the broker, whose ripgrep and koffi
 * imports then run from the CLI's own dependencies).
 */
function importedPackages(files: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const file of files.filter((path) => CODE_FILE.test(path))) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(SPECIFIER)) {
      const name = packageNameOf(match[2] as string);
      if (name !== null) names.add(name);
    }
    for (const list of text.matchAll(BUNDLE_EXTERNALS)) {
      for (const quoted of (list[1] as string).matchAll(/(['"])([^'"]+)\1/g)) {
        const name = packageNameOf(quoted[2] as string);
        if (name !== null) names.add(name);
      }
    }
  }
  return names;
}

function binNamesOf(dir: string, dependency: string): string[] {
  const manifestPath = join(dir, 'node_modules', dependency, 'package.json');
  if (!existsSync(manifestPath)) return [];
  const { bin } = readJson<Manifest>(manifestPath);
  if (bin === undefined) return [];
  return typeof bin === 'string' ? [dependency.replace(/^@[^/]+\//, '')] : Object.keys(bin);
}

function tsconfigTypes(files: readonly string[]): Set<string> {
  const types = new Set<string>();
  for (const file of files.filter((path) => /(?:^|\/)tsconfig[^/]*\.json$/.test(path))) {
    const config = readJson<{ compilerOptions?: { types?: string[] } }>(file);
    for (const name of config.compilerOptions?.types ?? []) types.add(name);
  }
  return types;
}

/** `@types/scope__name` describes `@scope/name`; `@types/name` describes `name`. */
function typedPackage(typesPackage: string): string {
  const name = typesPackage.slice('@types/'.length);
  return name.includes('__') ? `@${name.replace('__', '/')}` : name;
}

/** The declared dependencies of the package at `dir` that none of its files or scripts uses. */
function unusedDependencies(dir: string, nested: ReadonlySet<string> = new Set()): string[] {
  const manifest = readJson<Manifest>(join(dir, 'package.json'));
  const files = ownFiles(dir, nested);
  const imported = importedPackages(files);
  const scriptWords = new Set(
    Object.values(manifest.scripts ?? {}).flatMap((script) => script.split(/[\s;&|()]+/)),
  );
  const types = tsconfigTypes(files);
  const used = (name: string): boolean => {
    if (imported.has(name)) return true;
    if (binNamesOf(dir, name).some((bin) => scriptWords.has(bin))) return true;
    if (!name.startsWith('@types/')) return false;
    const typed = typedPackage(name);
    return types.has(typed) || used(typed);
  };
  return SECTIONS.flatMap((section) =>
    Object.keys(manifest[section] ?? {})
      .filter((name) => !used(name))
      .map((name) => `${section}: ${name}`),
  );
}

function workspacePackageDirs(): string[] {
  const workspace = readFileSync(join(REPO, 'pnpm-workspace.yaml'), 'utf8');
  const patterns = [...workspace.matchAll(/^\s*-\s*['"]?([^'"\s]+)['"]?\s*$/gm)].map((m) => m[1] as string);
  const dirs = patterns.flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [join(REPO, pattern)];
    const parent = join(REPO, pattern.slice(0, -2));
    return readdirSync(parent, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(parent, entry.name));
  });
  return dirs.filter((dir) => existsSync(join(dir, 'package.json')));
}

describe('declared dependencies', () => {
  const packages = workspacePackageDirs();

  it('finds the workspace packages', () => {
    expect(packages.map((dir) => relative(REPO, dir)).sort()).toEqual(
      expect.arrayContaining([
        'bench',
        'packages/broker',
        'packages/cli',
        'packages/helper',
        'packages/policy',
        'test',
      ]),
    );
  });

  it('are all used by the root package', () => {
    expect(unusedDependencies(REPO, new Set(packages))).toEqual([]);
  });

  it.each(packages.map((dir) => [relative(REPO, dir), dir]))('are all used by %s', (_name, dir) => {
    expect(unusedDependencies(dir)).toEqual([]);
  });
});

describe('the unused-dependency check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fs-sandbox-deps-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };

  it('reports what no file imports and no script runs, and nothing else', () => {
    write(
      'package.json',
      JSON.stringify({
        scripts: { build: 'tool src' },
        dependencies: { imported: '1', 'sub-path': '1', '@scope/required': '1', unused: '1' },
        optionalDependencies: { 'optional-unused': '1' },
        devDependencies: {
          'has-bin': '1',
          '@types/imported': '1',
          '@types/scope__required': '1',
          '@types/configured': '1',
          '@types/orphan': '1',
        },
      }),
    );
    write('src/a.ts', "import { x } from 'imported';\nimport y from 'sub-path/deep';\n");
    write('src/b.cjs', "const z = require('@scope/required');\n");
    write('tsconfig.json', JSON.stringify({ compilerOptions: { types: ['configured'] } }));
    write('node_modules/has-bin/package.json', JSON.stringify({ bin: { tool: 'cli.js' } }));
    write('node_modules/unused/package.json', JSON.stringify({ bin: 'cli.js' }));
    expect(unusedDependencies(dir)).toEqual([
      'dependencies: unused',
      'optionalDependencies: optional-unused',
      'devDependencies: @types/orphan',
    ]);
  });
});
