import { FsError } from '../error-kinds.js';
import { BPF_OP, BpfAssembler, type BpfInstruction, type BpfLabel, SECCOMP_DATA } from './classic-bpf.js';
import { SECCOMP_ABIS, type SeccompArch, type SyscallName } from './syscall-abi.js';

/**
 * A policy-free builder of seccomp filters: an architecture, rules per system call (each an action
 * under argument conditions), a default action. What a sandbox refuses is decided elsewhere (the
 * rule lists in sandbox-syscall-rules.ts); this module only turns rules into a classic-BPF program
 * the kernel loads (through bwrap's `--seccomp FD`, or `seccomp(2)` by a launcher), so that the
 * decisions themselves are data a test can decode (seccomp-decode.ts).
 *
 * The program's order matters:
 *   1. the architecture: any other ABI's numbers mean other calls (i386's 102 is socketcall, whose
 *      arguments lie in memory a filter cannot read), so a foreign ABI is refused outright;
 *   2. on x86_64, the x32 ABI (same architecture value, bit 30 of the number) likewise;
 *   3. then each named call in rule order, its conditions on the arguments, its action;
 *   4. everything else gets the default action.
 */

export type SeccompAction =
  | { type: 'allow' }
  | { type: 'errno'; errno: number }
  | { type: 'kill-process' }
  | { type: 'kill-thread' }
  | { type: 'trap' }
  | { type: 'log' }
  | { type: 'user-notif' };

/** SECCOMP_RET_* (linux/seccomp.h). */
const RETURN_VALUE: Record<SeccompAction['type'], number> = {
  'kill-process': 0x80000000,
  'kill-thread': 0x00000000,
  trap: 0x00030000,
  errno: 0x00050000,
  'user-notif': 0x7fc00000,
  log: 0x7ffc0000,
  allow: 0x7fff0000,
};

/** The value a filter returns for an action. */
export function seccompReturnValue(action: SeccompAction): number {
  if (action.type !== 'errno') return RETURN_VALUE[action.type];
  if (!Number.isInteger(action.errno) || action.errno < 1 || action.errno > 4095) {
    throw new FsError('internal_error', `seccomp errno ${action.errno} is not between 1 and 4095`);
  }
  return (RETURN_VALUE.errno | action.errno) >>> 0;
}

/**
 * One comparison of an argument register. `width: 32` compares the low word only: the right width
 * for an `int` or `unsigned int` parameter, which the kernel truncates, so a value with garbage in
 * the high word still matches what the kernel will see (a 64-bit compare there could be dodged by
 * setting a high bit). `width: 64` compares both words, for pointers, sizes and 64-bit flags.
 * Ordering comparisons are unsigned, as the kernel reads flags and sizes.
 */
export interface ArgCondition {
  arg: 0 | 1 | 2 | 3 | 4 | 5;
  width: 32 | 64;
  op: 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le' | 'masked-eq';
  value: bigint;
  /** For `masked-eq`: the argument AND this mask must equal `value`. */
  mask?: bigint;
}

/** An action for one call when every condition holds (no conditions: always). */
export interface SyscallRule {
  syscall: SyscallName;
  action: SeccompAction;
  when?: readonly ArgCondition[];
}

export interface SeccompFilterSpec {
  arch: SeccompArch;
  /** Tried in order for a call; the first whose conditions all hold decides. */
  rules: readonly SyscallRule[];
  /** For every call no rule decides. */
  defaultAction: SeccompAction;
  /** For a call through another ABI (a foreign architecture, x32 on x86_64). */
  foreignAbiAction: SeccompAction;
}

export interface SeccompProgram {
  arch: SeccompArch;
  instructions: BpfInstruction[];
}

const WORD = 0xffffffffn;

/** Builds the filter program of `spec` (see the module comment for its order). */
export function buildSeccompProgram(spec: SeccompFilterSpec): SeccompProgram {
  const abi = SECCOMP_ABIS[spec.arch];
  const asm = new BpfAssembler();
  const foreign = seccompReturnValue(spec.foreignAbiAction);
  const fallback = seccompReturnValue(spec.defaultAction);

  asm.loadWord(SECCOMP_DATA.arch);
  const nativeArch = asm.newLabel();
  asm.branch(BPF_OP.jumpIfEqual, abi.auditArch, nativeArch, null);
  asm.return(foreign);
  asm.place(nativeArch);
  asm.loadWord(SECCOMP_DATA.nr);
  if (abi.x32Bit !== null) {
    // Numbers at or above the x32 bit are x32 calls, except -1: the "no call" a tracer or a
    // program's probe uses, which the kernel answers ENOSYS and which no rule names anyway.
    const native = asm.newLabel();
    const x32 = asm.newLabel();
    asm.branch(BPF_OP.jumpIfGreaterOrEqual, abi.x32Bit, null, native);
    asm.branch(BPF_OP.jumpIfEqual, 0xffffffff, native, x32);
    asm.place(x32);
    asm.return(foreign);
    asm.place(native);
  }

  for (const [syscall, rules] of groupBySyscall(spec.rules)) {
    const nr = abi.syscalls[syscall];
    if (nr === undefined) throw new FsError('internal_error', `no ${spec.arch} number for ${syscall}`);
    const next = asm.newLabel();
    // A dry run measures the body: a conditional jump reaches at most 255 instructions ahead.
    const measure = new BpfAssembler();
    emitSyscallBody(measure, rules, fallback);
    if (measure.length <= 255) {
      asm.branch(BPF_OP.jumpIfEqual, nr, null, next);
    } else {
      const matched = asm.newLabel();
      asm.branch(BPF_OP.jumpIfEqual, nr, matched, null);
      asm.jump(next);
      asm.place(matched);
    }
    // The body returns on every path (and changes the accumulator): `next` is reached only by
    // the jump above, with the number still loaded.
    emitSyscallBody(asm, rules, fallback);
    asm.place(next);
  }
  asm.return(fallback);
  return { arch: spec.arch, instructions: asm.assemble() };
}

/** Rules of one call stay together, in their order; calls in the order they first appear. */
function groupBySyscall(rules: readonly SyscallRule[]): Map<SyscallName, SyscallRule[]> {
  const groups = new Map<SyscallName, SyscallRule[]>();
  for (const rule of rules) {
    const group = groups.get(rule.syscall);
    if (group === undefined) groups.set(rule.syscall, [rule]);
    else group.push(rule);
  }
  return groups;
}

function emitSyscallBody(asm: BpfAssembler, rules: readonly SyscallRule[], fallback: number): void {
  for (const rule of rules) {
    const conditions = rule.when ?? [];
    // A rule without conditions decides every call that reaches it: nothing after it can run.
    if (conditions.length === 0) {
      asm.return(seccompReturnValue(rule.action));
      return;
    }
    const nextRule = asm.newLabel();
    for (const condition of conditions) emitCondition(asm, condition, nextRule);
    asm.return(seccompReturnValue(rule.action));
    asm.place(nextRule);
  }
  asm.return(fallback);
}

/** Falls through when `condition` holds, jumps to `fail` when it does not. */
function emitCondition(asm: BpfAssembler, condition: ArgCondition, fail: BpfLabel): void {
  validateCondition(condition);
  const { arg, op } = condition;
  const value = condition.value & (condition.width === 32 ? WORD : 0xffffffffffffffffn);
  const mask =
    (condition.mask ?? 0xffffffffffffffffn) & (condition.width === 32 ? WORD : 0xffffffffffffffffn);
  const low = Number(value & WORD);
  const high = Number((value >> 32n) & WORD);
  const pass = asm.newLabel();
  const loadLow = () => asm.loadWord(SECCOMP_DATA.argLow(arg));
  const loadHigh = () => asm.loadWord(SECCOMP_DATA.argHigh(arg));

  if (op === 'masked-eq') {
    if (condition.width === 64) {
      loadHigh();
      asm.and(Number((mask >> 32n) & WORD));
      asm.branch(BPF_OP.jumpIfEqual, high, null, fail);
    }
    loadLow();
    asm.and(Number(mask & WORD));
    asm.branch(BPF_OP.jumpIfEqual, low, null, fail);
    asm.place(pass);
    return;
  }
  if (condition.width === 32) {
    loadLow();
    emitWordComparison(asm, op, low, pass, fail);
    asm.place(pass);
    return;
  }
  // 64 bits: the high words decide unless they are equal, then the low words do.
  loadHigh();
  switch (op) {
    case 'eq':
      asm.branch(BPF_OP.jumpIfEqual, high, null, fail);
      break;
    case 'ne':
      asm.branch(BPF_OP.jumpIfEqual, high, null, pass);
      break;
    case 'gt':
    case 'ge':
      asm.branch(BPF_OP.jumpIfGreater, high, pass, null);
      asm.branch(BPF_OP.jumpIfEqual, high, null, fail);
      break;
    case 'lt':
    case 'le':
      asm.branch(BPF_OP.jumpIfGreater, high, fail, null);
      asm.branch(BPF_OP.jumpIfEqual, high, null, pass);
      break;
  }
  loadLow();
  emitWordComparison(asm, op, low, pass, fail);
  asm.place(pass);
}

/** One unsigned 32-bit comparison of the accumulator with `k`. */
function emitWordComparison(
  asm: BpfAssembler,
  op: Exclude<ArgCondition['op'], 'masked-eq'>,
  k: number,
  pass: BpfLabel,
  fail: BpfLabel,
): void {
  switch (op) {
    case 'eq':
      asm.branch(BPF_OP.jumpIfEqual, k, pass, fail);
      return;
    case 'ne':
      asm.branch(BPF_OP.jumpIfEqual, k, fail, pass);
      return;
    case 'gt':
      asm.branch(BPF_OP.jumpIfGreater, k, pass, fail);
      return;
    case 'ge':
      asm.branch(BPF_OP.jumpIfGreaterOrEqual, k, pass, fail);
      return;
    case 'lt':
      asm.branch(BPF_OP.jumpIfGreaterOrEqual, k, fail, pass);
      return;
    case 'le':
      asm.branch(BPF_OP.jumpIfGreater, k, fail, pass);
      return;
  }
}

function validateCondition(condition: ArgCondition): void {
  const limit = condition.width === 32 ? WORD : 0xffffffffffffffffn;
  const bad =
    !Number.isInteger(condition.arg) || condition.arg < 0 || condition.arg > 5
      ? `argument ${condition.arg}`
      : condition.value < 0n || condition.value > limit
        ? `value ${condition.value} for ${condition.width} bits`
        : condition.op === 'masked-eq'
          ? condition.mask === undefined || condition.mask < 0n || condition.mask > limit
            ? 'mask'
            : (condition.value & ~condition.mask) !== 0n
              ? 'value with bits outside its mask (it could never match)'
              : null
          : condition.mask !== undefined
            ? `a mask on ${condition.op}`
            : null;
  if (bad !== null) throw new FsError('internal_error', `seccomp rule condition has a bad ${bad}`);
}
