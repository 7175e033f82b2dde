import { FsError } from '../error-kinds.js';

/**
 * The subset of classic BPF a seccomp filter is written in, and a small assembler for it. The
 * kernel runs a filter over `struct seccomp_data` and accepts (seccomp_check_filter) only absolute
 * word loads from it, ALU operations and jumps against constants, and returns; jumps go forward
 * only, a conditional one by at most 255 instructions. Nothing here knows a policy: the seccomp
 * program builder (seccomp-program.ts) decides what to emit.
 */

/** One `struct sock_filter`: opcode, jump-if-true and jump-if-false offsets, constant. */
export interface BpfInstruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** The opcodes used (class | size/op | source), named as `linux/bpf_common.h` composes them. */
export const BPF_OP = {
  /** BPF_LD | BPF_W | BPF_ABS: A = the 32-bit word at offset k of seccomp_data. */
  loadWord: 0x20,
  /** BPF_ALU | BPF_AND | BPF_K: A &= k. */
  andConstant: 0x54,
  /** BPF_JMP | BPF_JA: skip k instructions. */
  jump: 0x05,
  /** BPF_JMP | BPF_JEQ | BPF_K: A == k. */
  jumpIfEqual: 0x15,
  /** BPF_JMP | BPF_JGT | BPF_K: A > k, unsigned. */
  jumpIfGreater: 0x25,
  /** BPF_JMP | BPF_JGE | BPF_K: A >= k, unsigned. */
  jumpIfGreaterOrEqual: 0x35,
  /** BPF_JMP | BPF_JSET | BPF_K: (A & k) != 0. */
  jumpIfAnySet: 0x45,
  /** BPF_RET | BPF_K: end with the action k. */
  returnConstant: 0x06,
} as const;

/** BPF_MAXINSNS: the kernel refuses a longer program. */
export const BPF_MAX_INSTRUCTIONS = 4096;

/** Bytes of one instruction in the program the kernel (or bwrap's `--seccomp FD`) reads. */
export const BPF_INSTRUCTION_BYTES = 8;

/**
 * Offsets into `struct seccomp_data` { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6] }
 * on a little-endian machine (x86_64, aarch64): a 64-bit argument's low word comes first.
 */
export const SECCOMP_DATA = {
  nr: 0,
  arch: 4,
  instructionPointerLow: 8,
  instructionPointerHigh: 12,
  argLow: (arg: number): number => 16 + 8 * arg,
  argHigh: (arg: number): number => 20 + 8 * arg,
  /** sizeof(struct seccomp_data): a load at or past it is refused by the kernel. */
  size: 64,
} as const;

/**
 * The program as the kernel takes it: each instruction as `u16 code, u8 jt, u8 jf, u32 k` in the
 * machine's byte order, which is little-endian on every architecture the builder supports.
 */
export function encodeBpf(instructions: readonly BpfInstruction[]): Uint8Array {
  const bytes = new Uint8Array(instructions.length * BPF_INSTRUCTION_BYTES);
  const view = new DataView(bytes.buffer);
  instructions.forEach((instruction, index) => {
    const at = index * BPF_INSTRUCTION_BYTES;
    view.setUint16(at, instruction.code, true);
    view.setUint8(at + 2, instruction.jt);
    view.setUint8(at + 3, instruction.jf);
    view.setUint32(at + 4, instruction.k >>> 0, true);
  });
  return bytes;
}

/** The instructions of an encoded program (the inverse of encodeBpf). */
export function decodeBpf(bytes: Uint8Array): BpfInstruction[] {
  if (bytes.length % BPF_INSTRUCTION_BYTES !== 0) {
    throw new FsError(
      'invalid_params',
      `a BPF program is a whole number of ${BPF_INSTRUCTION_BYTES}-byte instructions, not ${bytes.length} bytes`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const instructions: BpfInstruction[] = [];
  for (let at = 0; at < bytes.length; at += BPF_INSTRUCTION_BYTES) {
    instructions.push({
      code: view.getUint16(at, true),
      jt: view.getUint8(at + 2),
      jf: view.getUint8(at + 3),
      k: view.getUint32(at + 4, true),
    });
  }
  return instructions;
}

/** A place in the program a jump can name before it is emitted. */
export interface BpfLabel {
  readonly id: number;
}

type Item =
  | { kind: 'label'; label: BpfLabel }
  | { kind: 'plain'; code: number; k: number }
  | { kind: 'jump'; label: BpfLabel }
  | { kind: 'branch'; code: number; k: number; ifTrue: BpfLabel | null; ifFalse: BpfLabel | null };

/**
 * Emits instructions in order; jumps name labels, resolved to forward offsets by `assemble`.
 * A conditional jump whose target lies more than 255 instructions ahead cannot be encoded: the
 * caller must route it through an unconditional `jump` (seccomp-program.ts does, per syscall).
 */
export class BpfAssembler {
  private readonly items: Item[] = [];
  private labels = 0;

  newLabel(): BpfLabel {
    this.labels += 1;
    return { id: this.labels };
  }

  /** Places `label` at the next instruction. */
  place(label: BpfLabel): void {
    this.items.push({ kind: 'label', label });
  }

  loadWord(offset: number): void {
    this.items.push({ kind: 'plain', code: BPF_OP.loadWord, k: offset });
  }

  and(mask: number): void {
    this.items.push({ kind: 'plain', code: BPF_OP.andConstant, k: mask });
  }

  return(value: number): void {
    this.items.push({ kind: 'plain', code: BPF_OP.returnConstant, k: value });
  }

  jump(label: BpfLabel): void {
    this.items.push({ kind: 'jump', label });
  }

  /** A conditional jump: to `ifTrue` / `ifFalse`, or on to the next instruction where null. */
  branch(
    code: (typeof BPF_OP)['jumpIfEqual' | 'jumpIfGreater' | 'jumpIfGreaterOrEqual' | 'jumpIfAnySet'],
    k: number,
    ifTrue: BpfLabel | null,
    ifFalse: BpfLabel | null,
  ): void {
    this.items.push({ kind: 'branch', code, k, ifTrue, ifFalse });
  }

  /** Instructions emitted so far, not counting labels. */
  get length(): number {
    return this.items.filter((item) => item.kind !== 'label').length;
  }

  assemble(): BpfInstruction[] {
    const at = new Map<number, number>();
    let index = 0;
    for (const item of this.items) {
      if (item.kind === 'label') at.set(item.label.id, index);
      else index += 1;
    }
    const offset = (from: number, label: BpfLabel): number => {
      const target = at.get(label.id);
      if (target === undefined) throw new FsError('internal_error', 'BPF jump to a label never placed');
      const distance = target - (from + 1);
      if (distance < 0) throw new FsError('internal_error', 'BPF jumps only forward');
      return distance;
    };
    const instructions: BpfInstruction[] = [];
    for (const item of this.items) {
      const here = instructions.length;
      if (item.kind === 'label') continue;
      if (item.kind === 'plain') instructions.push({ code: item.code, jt: 0, jf: 0, k: item.k >>> 0 });
      else if (item.kind === 'jump')
        instructions.push({ code: BPF_OP.jump, jt: 0, jf: 0, k: offset(here, item.label) });
      else {
        const jt = item.ifTrue === null ? 0 : offset(here, item.ifTrue);
        const jf = item.ifFalse === null ? 0 : offset(here, item.ifFalse);
        if (jt > 255 || jf > 255) {
          throw new FsError('internal_error', `BPF conditional jump of ${Math.max(jt, jf)} exceeds 255`);
        }
        instructions.push({ code: item.code, jt, jf, k: item.k >>> 0 });
      }
    }
    if (instructions.length > BPF_MAX_INSTRUCTIONS) {
      throw new FsError(
        'internal_error',
        `seccomp program of ${instructions.length} instructions exceeds the kernel's ${BPF_MAX_INSTRUCTIONS}`,
      );
    }
    return instructions;
  }
}
