// The published declarations without zod. The wire types are zod-inferred (`z.input<…>` of the
// method table's schemas: one source), so every .d.ts that names one imports zod's declarations,
// and a consumer who type-checks without skipLibCheck checks all of zod's and our written-out
// schemas with them: most of a small consumer's check (bench/RESULTS.md). Here each zod-inferred
// type that the broker's and the helper's declarations (and the policy's plain modules they reach)
// name is computed by the compiler from the schemas and written out as the plain type it is
// (objects, unions, literals) into the policy's dist/types/wire-types.d.ts; a generic one over the
// methods as one entry per method. Their imports point there: the broker's and the helper's at
// `@fs-sandbox/policy/types` (dist/types/types.d.ts, exactly the names they use) instead of
// `@fs-sandbox/policy`, whose index also exports the schemas. Each written-out type is checked to
// be the schema's type both ways, so consumers see the same types; `@fs-sandbox/policy` itself
// still exports the schemas and their inferred types.
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

const POLICY = '@fs-sandbox/policy';

/** `import type { A, type B } from 'x';` and `export { … } from 'x';`, as tsc emits them (one line). */
const NAMED = /^(?:import|export)(?: type)? \{([^}]*)\} from '([^']+)';$/gm;
const STAR = /^export \* from '([^']+)';$/gm;
/** A type the printer names by its module: `import("/abs/path/module").Name`. */
const IMPORTED_NAME = /import\("([^"]+)"(?:, \{[^)]*\})?\)\.(\w+)/g;

const importsOf = (text) =>
  [...text.matchAll(NAMED)].map((match) => ({
    from: match[2],
    names: match[1]
      .split(',')
      .map((part) =>
        part
          .trim()
          .replace(/^type /, '')
          .split(' as ')[0]
          .trim(),
      )
      .filter((name) => name !== ''),
  }));

const specifier = (fromFile, toFile) => {
  const path = relative(dirname(fromFile), toFile).replace(/\.d\.ts$|\.ts$/, '.js');
  return path.startsWith('.') ? path : `./${path}`;
};

const resolveIn = (file, from) => join(dirname(file), from.replace(/\.js$/, '.d.ts'));

/**
 * Rewrites `outputs` (output path → .d.ts text) in place and adds the policy's wire-types.d.ts
 * and types.d.ts. `program` is the build's (fully checked); `policy` and `dependents` are
 * build-types' package entries ({ rootDir, outDir }).
 */
export function zodFreeTypes({ program, outputs, policy, dependents, fail }) {
  const checker = program.getTypeChecker();
  const paths = policyPaths(policy);
  const inPolicy = (file) => file.startsWith(`${policy.outDir}/`);

  // The policy's declaration files that import zod: the schemas, the method table, the app-server's.
  const zodBearing = new Set(
    [...outputs].filter(([file, text]) => inPolicy(file) && /from 'zod'/.test(text)).map(([file]) => file),
  );

  // The symbol `name` of the policy module whose declarations are `file` (its alias resolved).
  const symbolOf = (file, name) => {
    const module = checker.getSymbolAtLocation(program.getSourceFile(paths.sourceOf(file)));
    const exported = module && checker.getExportsOfModule(module).find((symbol) => symbol.name === name);
    if (exported === undefined) fail(`${paths.sourceOf(file)} exports no ${name}`);
    return exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  };
  const isValue = (symbol) => (symbol.flags & ts.SymbolFlags.Value) !== 0;

  /** Each name to write out, as { file (the declaring output), name }. */
  const wanted = new Map();
  const want = (file, name) => wanted.set(`${file}\0${name}`, { file, name });

  // 1. The policy's own files without zod that import only types from one with it: those imports
  //    point at wire-types.d.ts. One that imports a value (a schema) stays as it is; the check at
  //    the end fails the build if the zod-free layer reaches it.
  const wire = join(policy.outDir, 'wire-types.d.ts');
  for (const [file, text] of outputs) {
    if (!inPolicy(file) || zodBearing.has(file)) continue;
    const fromZod = importsOf(text)
      .filter(({ from }) => from.startsWith('.') && zodBearing.has(resolveIn(file, from)))
      .map(({ from, names }) => ({ from, names, target: resolveIn(file, from) }));
    if (fromZod.some(({ names, target }) => names.some((name) => isValue(symbolOf(target, name))))) continue;
    let rewritten = text;
    for (const { from, names, target } of fromZod) {
      for (const name of names) want(target, name);
      rewritten = rewritten.replaceAll(`from '${from}';`, `from '${specifier(file, wire)}';`);
    }
    outputs.set(file, rewritten);
  }

  // 2. The broker's and the helper's imports from `@fs-sandbox/policy` go to its `types` entry,
  //    which exports exactly those names: from wire-types.d.ts when zod-inferred, else from the
  //    module that declares them.
  const index = join(policy.outDir, 'index.d.ts');
  const entryNames = new Map();
  for (const [file, text] of outputs) {
    if (!dependents.some((pkg) => file.startsWith(`${pkg.outDir}/`))) continue;
    for (const { from, names } of importsOf(text)) {
      if (from !== POLICY) continue;
      for (const name of names) {
        const symbol = symbolOf(index, name);
        const declaring = paths.outputOf(symbol.declarations[0].getSourceFile().fileName);
        entryNames.set(name, { symbol, declaring });
        if (zodBearing.has(declaring)) {
          if (isValue(symbol)) fail(`${name} (of ${declaring}) is a value that needs zod`);
          want(declaring, symbol.name);
        }
      }
    }
    outputs.set(file, text.replaceAll(`from '${POLICY}';`, `from '${POLICY}/types';`));
  }

  outputs.set(wire, writeOut(program, paths, [...wanted.values()], zodBearing, fail));

  const entry = join(policy.outDir, 'types.d.ts');
  const exports = [...entryNames].map(([name, { symbol, declaring }]) => {
    const from = specifier(entry, zodBearing.has(declaring) ? wire : declaring);
    const exported = symbol.name === name ? name : `${symbol.name} as ${name}`;
    return `export ${isValue(symbol) ? '' : 'type '}{ ${exported} } from '${from}';`;
  });
  outputs.set(
    entry,
    `/** What the broker's and the helper's declarations take from ${POLICY}, without zod (scripts/zod-free-types.mjs). */\n${exports.sort().join('\n')}\n`,
  );

  // Nothing the entry reaches may import zod or a file that does.
  const reached = new Set();
  const visit = (file) => {
    if (reached.has(file)) return;
    reached.add(file);
    const text = outputs.get(file);
    if (text === undefined) fail(`${file} is imported but was not emitted`);
    if (zodBearing.has(file) || /from 'zod'/.test(text)) fail(`${file} imports zod, yet ${entry} reaches it`);
    const targets = [...text.matchAll(NAMED)].map((match) => match[2]);
    targets.push(...[...text.matchAll(STAR)].map((match) => match[1]));
    targets.push(...[...text.matchAll(/import\('([^']+)'\)/g)].map((match) => match[1]));
    for (const target of targets) if (target.startsWith('.')) visit(resolveIn(file, target));
  };
  visit(entry);
}

/** Between the policy's sources (src/x.ts) and its declarations (dist/types/x.d.ts). */
function policyPaths(policy) {
  return {
    policy,
    sourceOf: (output) => join(policy.rootDir, relative(policy.outDir, output)).replace(/\.d\.ts$/, '.ts'),
    outputOf: (source) => join(policy.outDir, relative(policy.rootDir, source)).replace(/\.ts$/, '.d.ts'),
  };
}

/**
 * A program of the build's files and `files` (path → text) in the policy's sources. Printed as a
 * consumer with exactOptionalPropertyTypes reads the types: an optional field's `| undefined`
 * appears only where the schema allows undefined.
 */
function withFiles(program, files) {
  const options = { ...program.getCompilerOptions(), exactOptionalPropertyTypes: true, noEmit: true };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) =>
    fileName in files
      ? ts.createSourceFile(fileName, files[fileName], languageVersion)
      : (program.getSourceFile(fileName) ?? read(fileName, languageVersion, ...rest));
  const exists = host.fileExists.bind(host);
  host.fileExists = (fileName) => fileName in files || exists(fileName);
  const probe = ts.createProgram({
    rootNames: [...program.getRootFileNames(), ...Object.keys(files)],
    options,
    host,
  });
  return { probe, checker: probe.getTypeChecker() };
}

/** wire-types.d.ts: each wanted name as the plain type the compiler computes for it. */
function writeOut(program, paths, wanted, zodBearing, fail) {
  const { policy } = paths;
  const probeFile = join(policy.rootDir, '__wire-types-probe.ts');
  const wireSource = join(policy.rootDir, '__wire-types.ts');
  const pending = [...wanted];
  const done = new Set();
  const declarations = [];
  /** Per written-out name: its module and the instances to compare (`Name` or `Name<"key">`). */
  const written = [];
  while (pending.length > 0) {
    const batch = pending.splice(0).filter(({ file, name }) => !done.has(`${file}\0${name}`));
    for (const { file, name } of batch) done.add(`${file}\0${name}`);
    if (batch.length === 0) continue;
    const imports = batch.map(
      ({ file }, i) => `import type * as m${i} from '${specifier(probeFile, paths.sourceOf(file))}';`,
    );

    // Which names are generic, and over which union of names (the methods).
    let { probe, checker } = withFiles(program, { [probeFile]: `${imports.join('\n')}\n` });
    const generic = batch.map(({ file, name }) => {
      const owner = checker.getSymbolAtLocation(probe.getSourceFile(paths.sourceOf(file)));
      const symbol = owner && checker.getExportsOfModule(owner).find((candidate) => candidate.name === name);
      if (symbol === undefined) fail(`${paths.sourceOf(file)} exports no ${name}`);
      const declaration = symbol.declarations?.[0];
      const parameters =
        declaration && ts.isTypeAliasDeclaration(declaration) ? declaration.typeParameters : undefined;
      if (parameters === undefined) return undefined;
      const constraint = parameters.length === 1 ? parameters[0].constraint : undefined;
      if (
        constraint === undefined ||
        !ts.isTypeReferenceNode(constraint) ||
        !ts.isIdentifier(constraint.typeName)
      ) {
        fail(`${name}: only a type generic over one named union of names (the methods) can be written out`);
      }
      const union = checker.getTypeFromTypeNode(constraint);
      const members = union.isUnion() ? union.types : [union];
      if (!members.every((member) => member.isStringLiteral()))
        fail(`${name}'s parameter is not a union of names`);
      pending.push({ file, name: constraint.typeName.text });
      return {
        parameter: parameters[0].name.text,
        constraint: constraint.typeName.text,
        keys: members.map((member) => member.value),
      };
    });

    // Each name, and each instance of a generic one, as an alias printed without its alias name.
    const instances = batch.flatMap(({ name }, i) =>
      generic[i] === undefined
        ? [{ alias: `p${i}`, type: `m${i}.${name}` }]
        : generic[i].keys.map((key, k) => ({
            alias: `p${i}_${k}`,
            type: `m${i}.${name}<${JSON.stringify(key)}>`,
          })),
    );
    const aliases = instances.map(({ alias, type }) => `export type ${alias} = ${type};`);
    ({ probe, checker } = withFiles(program, { [probeFile]: `${[...imports, ...aliases].join('\n')}\n` }));
    const printed = new Map(
      checker
        .getExportsOfModule(checker.getSymbolAtLocation(probe.getSourceFile(probeFile)))
        .map((symbol) => [
          symbol.name,
          checker.typeToString(
            checker.getDeclaredTypeOfSymbol(symbol),
            undefined,
            ts.TypeFormatFlags.NoTruncation |
              ts.TypeFormatFlags.InTypeAlias |
              ts.TypeFormatFlags.UseFullyQualifiedType,
          ),
        ]),
    );
    // A named type inside: another zod-inferred one is written out too, a plain one imported.
    const plain = (text) =>
      text.replace(/\bBuffer<ArrayBufferLike>/g, 'Buffer').replace(IMPORTED_NAME, (_, path, name) => {
        const output = paths.outputOf(`${path}.ts`);
        if (!output.startsWith(`${policy.outDir}/`))
          fail(`${name} (of ${path}) cannot be written out without zod`);
        if (!zodBearing.has(output))
          return `import('${specifier(join(policy.outDir, 'wire-types.d.ts'), output)}').${name}`;
        pending.push({ file: output, name });
        return name;
      });
    batch.forEach(({ file, name }, i) => {
      const origin = relative(policy.rootDir, paths.sourceOf(file));
      const g = generic[i];
      written.push({
        file,
        name,
        instances: g === undefined ? [name] : g.keys.map((key) => `${name}<${JSON.stringify(key)}>`),
      });
      if (g === undefined) {
        declarations.push(
          `/** ${name} of ${origin}. */\nexport type ${name} = ${plain(printed.get(`p${i}`))};`,
        );
        return;
      }
      const body = g.keys.map((key, k) => `  ${JSON.stringify(key)}: ${plain(printed.get(`p${i}_${k}`))};`);
      declarations.push(
        `/** ${name} of ${origin}, for each of its ${g.keys.length} names. */\n` +
          `export type ${name}<${g.parameter} extends ${g.constraint}> = {\n${body.join('\n')}\n}[${g.parameter}];`,
      );
    });
  }
  const text = `/** The policy's zod-inferred types as the compiler computes them from the schemas (scripts/zod-free-types.mjs). */\n${declarations.join('\n')}\n`;
  assertSameTypes(program, paths, written, text, wireSource, fail);
  return text;
}

/** Each written-out type and the schema's are assignable both ways, or the build fails. */
function assertSameTypes(program, paths, written, wireText, wireSource, fail) {
  const checkFile = join(paths.policy.rootDir, '__wire-types-check.ts');
  const lines = [
    `import type * as wire from '${specifier(checkFile, wireSource)}';`,
    'type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;',
  ];
  written.forEach(({ file, instances }, i) => {
    lines.push(`import type * as s${i} from '${specifier(checkFile, paths.sourceOf(file))}';`);
    instances.forEach((instance, k) => {
      lines.push(`export const c${i}_${k}: Same<wire.${instance}, s${i}.${instance}> = true;`);
    });
  });
  const { probe } = withFiles(program, { [wireSource]: wireText, [checkFile]: `${lines.join('\n')}\n` });
  const diagnostics = [wireSource, checkFile].flatMap((file) => [
    ...probe.getSyntacticDiagnostics(probe.getSourceFile(file)),
    ...probe.getSemanticDiagnostics(probe.getSourceFile(file)),
  ]);
  if (diagnostics.length > 0) {
    const where = diagnostics.slice(0, 10).map((diagnostic) => {
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
      return `${diagnostic.file.fileName === checkFile ? lines[line] : `wire-types.d.ts line ${line + 1}`}: ${text}`;
    });
    fail(`written-out wire types differ from their schemas' (compared both ways):\n  ${where.join('\n  ')}`);
  }
}
