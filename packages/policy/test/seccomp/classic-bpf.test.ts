import { describe, expect, it } from 'vitest';
import {
  BPF_MAX_INSTRUCTIONS,
  BPF_OP,
  BpfAssembler,
  decodeBpf,
  encodeBpf,
} from '../../src/seccomp/classic-bpf.js';

describe('classic BPF encoding', () => {
  it('writes each instruction as u16 code, u8 jt, u8 jf, u32 k, little-endian, and reads it back', () => {
    const program = [
      { code: BPF_OP.loadWord, jt: 0, jf: 0, k: 4 },
      { code: BPF_OP.jumpIfEqual, jt: 1, jf: 0, k: 0xc000003e },
      { code: BPF_OP.returnConstant, jt: 0, jf: 0, k: 0x80000000 },
    ];
    const bytes = encodeBpf(program);
    expect([...bytes.subarray(8, 16)]).toEqual([0x15, 0x00, 0x01, 0x00, 0x3e, 0x00, 0x00, 0xc0]);
    expect(decodeBpf(bytes)).toEqual(program);
  });

  it('refuses bytes that are not whole instructions', () => {
    expect(() => decodeBpf(new Uint8Array(12))).toThrow(/whole number of 8-byte instructions/);
  });
});

describe('BPF assembler', () => {
  it('resolves labels to forward offsets, null meaning the next instruction', () => {
    const asm = new BpfAssembler();
    const yes = asm.newLabel();
    asm.loadWord(0);
    asm.branch(BPF_OP.jumpIfEqual, 7, yes, null);
    asm.return(1);
    asm.place(yes);
    asm.return(2);
    expect(asm.assemble()).toEqual([
      { code: BPF_OP.loadWord, jt: 0, jf: 0, k: 0 },
      { code: BPF_OP.jumpIfEqual, jt: 1, jf: 0, k: 7 },
      { code: BPF_OP.returnConstant, jt: 0, jf: 0, k: 1 },
      { code: BPF_OP.returnConstant, jt: 0, jf: 0, k: 2 },
    ]);
  });

  it('refuses a backward jump, a label never placed, and a conditional jump past 255', () => {
    const back = new BpfAssembler();
    const start = back.newLabel();
    back.place(start);
    back.return(0);
    back.jump(start);
    expect(() => back.assemble()).toThrow(/only forward/);

    const unplaced = new BpfAssembler();
    unplaced.jump(unplaced.newLabel());
    expect(() => unplaced.assemble()).toThrow(/never placed/);

    const far = new BpfAssembler();
    const end = far.newLabel();
    far.branch(BPF_OP.jumpIfEqual, 1, end, null);
    for (let i = 0; i < 256; i += 1) far.return(0);
    far.place(end);
    far.return(1);
    expect(() => far.assemble()).toThrow(/exceeds 255/);
  });

  it('refuses a program longer than the kernel loads', () => {
    const asm = new BpfAssembler();
    for (let i = 0; i <= BPF_MAX_INSTRUCTIONS; i += 1) asm.return(0);
    expect(() => asm.assemble()).toThrow(/exceeds the kernel's 4096/);
  });
});
