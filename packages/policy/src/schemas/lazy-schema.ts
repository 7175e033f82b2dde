import type { z } from 'zod';

/**
 * A schema built on its first use, then kept: `fooSchema()` is the schema. Building a zod schema is
 * most of what loading the policy would otherwise cost (every method's params and results, the
 * sandbox context, the app-server's types: several milliseconds of every `fs-sandbox` start), and a
 * process parses a few of them: `fs-sandbox cat --no-sandbox` builds fs/readFile's params and
 * nothing of the context. Each schema is still built once, so identity checks on a schema hold.
 */
export function lazySchema<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => {
    built ??= build();
    return built;
  };
}

/** A schema as the tables hold it: built by the first call (see `lazySchema`). */
export type LazySchema<S extends z.ZodType = z.ZodType> = () => S;
