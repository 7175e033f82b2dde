/**
 * How the end-to-end files run, in one place (vitest.config.ts builds its projects from it, and
 * test/static/suite-plan.test.ts checks that every file named here exists).
 */

/**
 * The helper runtime matrix of the end-to-end suites. Every suite runs once with the default
 * runtime (`auto`: the compiled Bun helper where it is built, else node). The suites below also run
 * a second time with node helpers (the `e2e-node` project sets FS_SANDBOX_HELPER_RUNTIME=node for
 * every CLI, server and library broker they start), because what they check depends on the code the
 * helper runs under: its file-system calls, its I/O on stdin, stdout and stderr, the descriptors it
 * inherits, its child processes. The rest check the broker, the CLI, the servers or the protocols,
 * whose code is the same whichever runtime runs the helper, and run once.
 *
 * The attack matrices among them (linux-escapes, physical-enforcement) run only their pre-check-off
 * half again (MATRIX_PRECHECK_MODES in cli.ts, also in e2e-landlock): with the pre-check on, what
 * the helper sees it also sees with the pre-check off, and the rest is the broker's pre-check.
 *
 * Suites that compare the runtimes themselves loop over HELPER_RUNTIMES inside
 * (helper-runtimes.ts) and are not listed: inherited-descriptors, late-denied-read,
 * bun-hardening, bench-warm-floor. The helper's unit suites run under Bun too
 * (`pnpm run test:helper-bun`).
 */
export const RUNTIME_SENSITIVE_SUITES: Readonly<Record<string, string>> = {
  'test/helper-program.test.ts':
    'the helper program itself, one request piped in, its reply and the disk checked',
  'test/linux-escapes.test.ts': "refusals with the pre-check off come from the helper's physical checks",
  'test/physical-enforcement.test.ts':
    "the helper's physical checks at use time (/proc/self/fd, opened parents)",
  'test/linux-operations.test.ts':
    "every operation's success on disk, through the runtime's file-system calls",
  'test/linux-file-modes.test.ts': 'modes and the umask, as each runtime creates and chmods files',
  'test/linux-isolation.test.ts':
    "what the helper's process can see of the host (its environment, /proc, the network)",
  'test/large-payload.test.ts':
    "512 MiB through the helper's stdout framing, and a large write through its stdin",
  'test/conformance-reference.test.ts':
    "listings and metadata as each runtime reads them (Bun's directory reader differs)",
  'test/rename-batch.test.ts':
    'renames through opened parents, copies across file systems, batches in one helper',
  'test/apply-patch.test.ts': "a patch's files written and removed through the helper's checked writes",
  'test/search-glob.test.ts': 'ripgrep run as a child process of the helper, its output streamed',
  'test/search-hard-links.test.ts': "ripgrep's lines dropped by the identity of a denied file, in the helper",
  'test/text-edit.test.ts': "text decoding and encoding (TextDecoder, BOMs) in the helper's runtime",
  'test/tree-progress.test.ts': 'progress lines the helper writes on stderr while it works',
  'test/write-handles.test.ts': 'blocks read and written by the helper at offsets',
  'test/pool-freshness.test.ts': "a warm spare's check of its bind mounts before it acts",
  'test/pool-lifecycle.test.ts': 'warm spares started, warmed up and killed under each runtime',
};

/**
 * The suites that run a second time with no user namespace for any CLI they start (the
 * `e2e-landlock` project sets FS_SANDBOX_TEST_NO_USERNS=1: support/cli.ts), so that `auto` takes
 * the Landlock backend, each with why. test/landlock-backend.test.ts runs without them on its own.
 */
export const LANDLOCK_SUITES: Readonly<Record<string, string>> = {
  'test/linux-escapes.test.ts':
    'the attack matrix (links, denied paths, .git, writes outside) refused by Landlock, as root and nobody',
  'test/physical-enforcement.test.ts':
    "the helper's physical checks and races where Landlock, not mounts, stands behind them (one served broker per mode)",
  'test/linux-operations.test.ts':
    'every operation succeeds on disk in a workspace whose root holds denied paths (Landlock carves it)',
  'test/command-surface.test.ts':
    "what a command may leave on the host (.git, .codex, hooks, renamed parents) with Landlock's carving in place of read-only binds",
  'test/host-privileges.test.ts':
    'no sysctl takes a write from a command or a helper of a root broker, with /proc the host one',
};

/**
 * Files that must not run beside other files, each with why. They run in a group of their own after
 * every other file has finished (vitest's `sequence.groupOrder`), one at a time. Every other
 * end-to-end file runs beside another: each makes its own directories (mkdtemp), servers on port 0,
 * and finds its own processes by a path only it uses.
 */
export const ALONE_SUITES: Readonly<Record<string, string>> = {};
