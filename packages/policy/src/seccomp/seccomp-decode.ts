import { FsError } from '../error-kinds.js';
import { BPF_MAX_INSTRUCTIONS, BPF_OP, type BpfInstruction, SECCOMP_DATA } from './classic-bpf.js';
import { archOfAuditValue, type SeccompArch, syscallNameOf } from './syscall-abi.js';

/**
 * Reading a seccomp program back: `checkSeccompProgram` applies the kernel's own acceptance rules,
 * `runSeccompProgram` executes it over a `seccomp_data` as the kernel would, and
 * `disassembleSeccomp` prints it with the fields and calls it names. The tests judge the builder
 * by running what it emitted, and `fs-sandbox explain` shows the filter a sandbox gets.
 */

/** What the kernel passes a filter for one call. Arguments are full 64-bit registers. */
export interface SeccompData {
  nr: number;
  arch: number;
  instructionPointer?: bigint;
  args?: readonly bigint[];
}

const JUMPS: ReadonlySet<number> = new Set([
  BPF_OP.jumpIfEqual,
  BPF_OP.jumpIfGreater,
  BPF_OP.jumpIfGreaterOrEqual,
  BPF_OP.jumpIfAnySet,
]);

/**
 * Refuses what seccomp_check_filter (and sk_chk_filter before it) refuses: an empty or too long
 * program, an opcode outside the seccomp subset, a load that is unaligned or past seccomp_data, a
 * jump past the end, and a last instruction that is not a return.
 */
export function checkSeccompProgram(program: readonly BpfInstruction[]): void {
  const fail = (index: number, why: string): never => {
    throw new FsError('invalid_params', `seccomp program instruction ${index}: ${why}`);
  };
  if (program.length === 0 || program.length > BPF_MAX_INSTRUCTIONS) {
    throw new FsError(
      'invalid_params',
      `seccomp program length ${program.length} is not 1 to ${BPF_MAX_INSTRUCTIONS}`,
    );
  }
  program.forEach((instruction, index) => {
    const { code, jt, jf, k } = instruction;
    const remaining = program.length - index - 1;
    if (code === BPF_OP.loadWord) {
      if (k % 4 !== 0 || k >= SECCOMP_DATA.size) fail(index, `load at offset ${k}`);
    } else if (code === BPF_OP.jump) {
      if (k >= remaining) fail(index, `jump of ${k} past the end`);
    } else if (JUMPS.has(code)) {
      if (jt >= remaining || jf >= remaining) fail(index, `jump of ${Math.max(jt, jf)} past the end`);
    } else if (code !== BPF_OP.andConstant && code !== BPF_OP.returnConstant) {
      fail(index, `opcode 0x${code.toString(16)} is not used by seccomp programs built here`);
    }
  });
  const last = program[program.length - 1] as BpfInstruction;
  if (last.code !== BPF_OP.returnConstant) {
    fail(program.length - 1, 'the program does not end in a return');
  }
}

/** The value the program returns for `data` (check it first: this trusts its jumps). */
export function runSeccompProgram(program: readonly BpfInstruction[], data: SeccompData): number {
  const words = seccompDataWords(data);
  let accumulator = 0;
  let pc = 0;
  for (let steps = 0; steps <= program.length; steps += 1) {
    const instruction = program[pc];
    if (instruction === undefined)
      throw new FsError('invalid_params', `seccomp program ran off its end at ${pc}`);
    const { code, jt, jf, k } = instruction;
    switch (code) {
      case BPF_OP.loadWord:
        accumulator = words[k / 4] as number;
        pc += 1;
        break;
      case BPF_OP.andConstant:
        accumulator = (accumulator & k) >>> 0;
        pc += 1;
        break;
      case BPF_OP.jump:
        pc += 1 + k;
        break;
      case BPF_OP.jumpIfEqual:
        pc += 1 + (accumulator === k ? jt : jf);
        break;
      case BPF_OP.jumpIfGreater:
        pc += 1 + (accumulator > k ? jt : jf);
        break;
      case BPF_OP.jumpIfGreaterOrEqual:
        pc += 1 + (accumulator >= k ? jt : jf);
        break;
      case BPF_OP.jumpIfAnySet:
        pc += 1 + ((accumulator & k) !== 0 ? jt : jf);
        break;
      case BPF_OP.returnConstant:
        return k >>> 0;
      default:
        throw new FsError('invalid_params', `seccomp program has opcode 0x${code.toString(16)} at ${pc}`);
    }
  }
  throw new FsError('invalid_params', 'seccomp program did not return');
}

/** `seccomp_data` as the 16 words a load reads (little-endian: each 64-bit value's low word first). */
function seccompDataWords(data: SeccompData): number[] {
  const split = (value: bigint): [number, number] => [
    Number(value & 0xffffffffn),
    Number((value >> 32n) & 0xffffffffn),
  ];
  const args = data.args ?? [];
  return [
    data.nr >>> 0,
    data.arch >>> 0,
    ...split(data.instructionPointer ?? 0n),
    ...[0, 1, 2, 3, 4, 5].flatMap((index) => split(args[index] ?? 0n)),
  ];
}

/** A filter's return value in words: `ALLOW`, `ERRNO(13)`, `KILL_PROCESS`, … */
export function describeSeccompReturn(value: number): string {
  const action = (value & 0xffff0000) >>> 0;
  const data = value & 0xffff;
  switch (action) {
    case 0x80000000:
      return 'KILL_PROCESS';
    case 0x00000000:
      return 'KILL_THREAD';
    case 0x00030000:
      return `TRAP(${data})`;
    case 0x00050000:
      return `ERRNO(${data})`;
    case 0x7fc00000:
      return 'USER_NOTIF';
    case 0x7ff00000:
      return `TRACE(${data})`;
    case 0x7ffc0000:
      return 'LOG';
    case 0x7fff0000:
      return 'ALLOW';
    default:
      return `0x${value.toString(16)}`;
  }
}

const FIELD_NAMES = new Map<number, string>([
  [SECCOMP_DATA.nr, 'nr'],
  [SECCOMP_DATA.arch, 'arch'],
  [SECCOMP_DATA.instructionPointerLow, 'instruction_pointer (low)'],
  [SECCOMP_DATA.instructionPointerHigh, 'instruction_pointer (high)'],
  ...[0, 1, 2, 3, 4, 5].flatMap(
    (arg): Array<[number, string]> => [
      [SECCOMP_DATA.argLow(arg), `args[${arg}] (low)`],
      [SECCOMP_DATA.argHigh(arg), `args[${arg}] (high)`],
    ],
  ),
]);

/**
 * The field of seccomp_data the accumulator holds at each instruction, on every path that reaches
 * it (null where paths disagree or it was computed): jumps only go forward, so one pass in order
 * sees every predecessor first.
 */
function loadedFields(program: readonly BpfInstruction[]): Array<number | null> {
  const incoming: Array<Array<number | null>> = program.map(() => []);
  const fields: Array<number | null> = [];
  program.forEach((instruction, index) => {
    const sources = incoming[index] as Array<number | null>;
    const here =
      index === 0
        ? null
        : sources.length > 0 && sources.every((field) => field === sources[0])
          ? (sources[0] as number | null)
          : null;
    fields.push(here);
    const { code, jt, jf, k } = instruction;
    const after = code === BPF_OP.loadWord ? k : code === BPF_OP.andConstant ? null : here;
    const reach = (target: number) => incoming[target]?.push(after);
    if (code === BPF_OP.returnConstant) return;
    if (code === BPF_OP.jump) reach(index + 1 + k);
    else if (JUMPS.has(code)) {
      reach(index + 1 + jt);
      reach(index + 1 + jf);
    } else reach(index + 1);
  });
  return fields;
}

/**
 * One line per instruction, jumps as absolute targets, loads named by their field, and constants
 * compared with `nr` named as calls of the program's architecture (learnt from its arch check):
 *
 *     0000  ld   [4]                       ; arch
 *     0001  jeq  #0xc000003e  0003 0002    ; x86_64
 *     0002  ret  KILL_PROCESS
 */
export function disassembleSeccomp(program: readonly BpfInstruction[]): string[] {
  const fields = loadedFields(program);
  let arch: SeccompArch | null = null;
  return program.map((instruction, index) => {
    const { code, jt, jf, k } = instruction;
    const loaded = fields[index];
    const at = (offset: number) => String(index + 1 + offset).padStart(4, '0');
    let text: string;
    let note = '';
    switch (code) {
      case BPF_OP.loadWord:
        text = `ld   [${k}]`;
        note = FIELD_NAMES.get(k) ?? '';
        break;
      case BPF_OP.andConstant:
        text = `and  #0x${k.toString(16)}`;
        break;
      case BPF_OP.jump:
        text = `ja   ${at(k)}`;
        break;
      case BPF_OP.returnConstant:
        text = `ret  ${describeSeccompReturn(k)}`;
        break;
      default: {
        const name =
          code === BPF_OP.jumpIfEqual
            ? 'jeq '
            : code === BPF_OP.jumpIfGreater
              ? 'jgt '
              : code === BPF_OP.jumpIfGreaterOrEqual
                ? 'jge '
                : code === BPF_OP.jumpIfAnySet
                  ? 'jset'
                  : `op${code.toString(16)}`;
        text = `${name} #0x${k.toString(16).padEnd(9)} ${at(jt)} ${at(jf)}`;
        if (loaded === SECCOMP_DATA.arch && code === BPF_OP.jumpIfEqual) {
          arch = archOfAuditValue(k) ?? arch;
          note = arch ?? '';
        } else if (loaded === SECCOMP_DATA.nr && code === BPF_OP.jumpIfEqual && arch !== null) {
          note = syscallNameOf(arch, k) ?? '';
        }
      }
    }
    const line = `${String(index).padStart(4, '0')}  ${text}`;
    return note === '' ? line : `${line.padEnd(40)} ; ${note}`;
  });
}
