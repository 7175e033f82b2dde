/** The installed Bun executable for this machine, or null (see bun-compile.mjs). */
export function bunExecutable(): string | null;
/** Compiles a single-file CommonJS program into a standalone, hardened Bun executable. */
export function compileWithBun(bun: string, program: string, outfile: string): void;
