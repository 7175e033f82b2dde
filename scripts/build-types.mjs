// Builds the declaration files the packages ship: packages/<name>/dist/types, which each package's
// `types` export condition points at (the `source` condition keeps the workspace and vitest on the
// TypeScript sources). Each package's tsconfig.build.json names its entry points and output folder
// (`tsc -p packages/<name>/tsconfig.build.json` builds that package alone, once its dependencies'
// types are built); this script emits all three from ONE program, resolving the cross-package
// imports (`@fs-sandbox/policy/core`, …) to their sources, so node's types, zod's and the policy's
// are parsed and checked once instead of once per package. The program is fully checked with
// NodeNext resolution (the workspace's own type-check uses Bundler), so a relative import without
// its `.js` extension fails here: the emitted files resolve under node16, nodenext and bundler
// alike. (`noCheck` would save about a quarter of the time but let such an import through.)
// Nothing is written unless the whole program is clean.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { zodFreeTypes } from './zod-free-types.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const PACKAGES = ['policy', 'helper', 'broker'];

const formatHost = {
  getCanonicalFileName: (fileName) => fileName,
  getCurrentDirectory: () => root,
  getNewLine: () => '\n',
};

function fail(diagnostics) {
  const format = process.stderr.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
  process.stderr.write(format(diagnostics, formatHost));
  process.stderr.write(`build-types: ${diagnostics.length} error(s), no declaration file written\n`);
  process.exit(1);
}

const configHost = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => fail([diagnostic]) };
const packages = PACKAGES.map((name) => {
  const dir = join(root, 'packages', name);
  const config = ts.getParsedCommandLineOfConfigFile(join(dir, 'tsconfig.build.json'), undefined, configHost);
  if (config === undefined) fail([]);
  if (config.errors.length > 0) fail(config.errors);
  const { rootDir, outDir } = config.options;
  if (rootDir === undefined || outDir === undefined)
    throw new Error(`${name}: tsconfig.build.json needs rootDir and outDir`);
  return { name, dir, config, rootDir: resolve(rootDir), outDir: resolve(outDir) };
});

// The per-package options, except that sibling packages resolve from source (their `source`
// condition) into this one program; outputs are routed to each package's outDir below.
const virtualOut = join(root, 'packages', '.types-out');
const options = {
  ...packages[0].config.options,
  customConditions: ['source'],
  rootDir: join(root, 'packages'),
  outDir: virtualOut,
};
delete options.configFilePath;
const program = ts.createProgram({ rootNames: packages.flatMap((pkg) => pkg.config.fileNames), options });

const outputs = new Map();
const emitted = program.emit(
  undefined,
  (fileName, text) => {
    const source = resolve(root, 'packages', relative(virtualOut, fileName));
    const inside = (dir) => {
      const rel = relative(dir, source);
      return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
    };
    const pkg = packages.find((candidate) => inside(candidate.rootDir));
    if (pkg === undefined) throw new Error(`build-types: ${fileName} belongs to no package's rootDir`);
    outputs.set(join(pkg.outDir, relative(pkg.rootDir, source)), text);
  },
  undefined,
  true,
);
const diagnostics = ts.sortAndDeduplicateDiagnostics([
  ...ts.getPreEmitDiagnostics(program),
  ...emitted.diagnostics,
]);
if (diagnostics.length > 0 || emitted.emitSkipped) fail(diagnostics);

zodFreeTypes({
  program,
  outputs,
  policy: packages[0],
  dependents: packages.slice(1),
  fail: (message) => {
    process.stderr.write(`build-types: ${message}; no declaration file written\n`);
    process.exit(1);
  },
});

for (const pkg of packages) rmSync(pkg.outDir, { recursive: true, force: true });
for (const [file, text] of outputs) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

// Every `types` target of every package's exports must now exist (a typo there ships no types),
// and the exports a package is packed with (publishConfig, applied by `pnpm pack`) must be its
// workspace exports without the `source` condition, whose TypeScript sources are not shipped.
// An export with only a `source` condition (the broker's `./internal`, bundled by the CLI from
// source) is the workspace's own and is not packed at all.
const withoutSource = (value) =>
  typeof value === 'object' && value !== null
    ? Object.fromEntries(
        Object.entries(value).flatMap(([k, v]) => {
          if (k === 'source') return [];
          const inner = withoutSource(v);
          return typeof inner === 'object' && inner !== null && Object.keys(inner).length === 0
            ? []
            : [[k, inner]];
        }),
      )
    : value;
const problems = [];
for (const pkg of packages) {
  const manifest = JSON.parse(readFileSync(join(pkg.dir, 'package.json'), 'utf8'));
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    const types = typeof target === 'object' && target !== null ? target.types : undefined;
    if (types !== undefined && !outputs.has(join(pkg.dir, types))) {
      problems.push(`${pkg.name}: exports["${subpath}"].types is ${types}, which was not emitted`);
    }
  }
  const packed = manifest.publishConfig?.exports;
  if (JSON.stringify(packed) !== JSON.stringify(withoutSource(manifest.exports))) {
    problems.push(`${pkg.name}: publishConfig.exports must be exports without the "source" conditions`);
  }
}
if (problems.length > 0) {
  process.stderr.write(
    `build-types: package manifests do not match the declaration files:\n  ${problems.join('\n  ')}\n`,
  );
  process.exit(1);
}
