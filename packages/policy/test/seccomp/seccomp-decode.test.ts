import { describe, expect, it } from 'vitest';
import { BPF_OP } from '../../src/seccomp/classic-bpf.js';
import {
  checkSeccompProgram,
  describeSeccompReturn,
  disassembleSeccomp,
  runSeccompProgram,
} from '../../src/seccomp/seccomp-decode.js';
import { buildSeccompProgram } from '../../src/seccomp/seccomp-program.js';

const ret = (k: number) => ({ code: BPF_OP.returnConstant, jt: 0, jf: 0, k });

describe('checkSeccompProgram (the kernel acceptance rules)', () => {
  it('refuses empty and over-long programs, unknown opcodes, bad loads, jumps past the end, no final return', () => {
    expect(() => checkSeccompProgram([])).toThrow(/length 0/);
    expect(() => checkSeccompProgram([{ code: 0x28, jt: 0, jf: 0, k: 0 }, ret(0)])).toThrow(/opcode 0x28/);
    expect(() => checkSeccompProgram([{ code: BPF_OP.loadWord, jt: 0, jf: 0, k: 2 }, ret(0)])).toThrow(
      /offset 2/,
    );
    expect(() => checkSeccompProgram([{ code: BPF_OP.loadWord, jt: 0, jf: 0, k: 64 }, ret(0)])).toThrow(
      /offset 64/,
    );
    expect(() => checkSeccompProgram([{ code: BPF_OP.jumpIfEqual, jt: 1, jf: 0, k: 0 }, ret(0)])).toThrow(
      /past the end/,
    );
    expect(() => checkSeccompProgram([{ code: BPF_OP.jump, jt: 0, jf: 0, k: 1 }, ret(0)])).toThrow(
      /past the end/,
    );
    expect(() => checkSeccompProgram([ret(0), { code: BPF_OP.loadWord, jt: 0, jf: 0, k: 0 }])).toThrow(
      /return/,
    );
    expect(() => checkSeccompProgram([ret(0x7fff0000)])).not.toThrow();
  });
});

describe('runSeccompProgram', () => {
  it('reads 64-bit arguments as two words, low first', () => {
    const program = [
      { code: BPF_OP.loadWord, jt: 0, jf: 0, k: 20 },
      { code: BPF_OP.jumpIfEqual, jt: 0, jf: 1, k: 0xabcd },
      ret(1),
      { code: BPF_OP.loadWord, jt: 0, jf: 0, k: 16 },
      { code: BPF_OP.andConstant, jt: 0, jf: 0, k: 0xff },
      { code: BPF_OP.jumpIfAnySet, jt: 0, jf: 1, k: 0x80 },
      ret(2),
      ret(3),
    ];
    checkSeccompProgram(program);
    expect(runSeccompProgram(program, { nr: 0, arch: 0, args: [0xabcd00000000n] })).toBe(1);
    expect(runSeccompProgram(program, { nr: 0, arch: 0, args: [0x180n] })).toBe(2);
    expect(runSeccompProgram(program, { nr: 0, arch: 0, args: [0x17fn] })).toBe(3);
  });
});

describe('describeSeccompReturn', () => {
  it('names each action and its data', () => {
    expect(describeSeccompReturn(0x7fff0000)).toBe('ALLOW');
    expect(describeSeccompReturn(0x0005000d)).toBe('ERRNO(13)');
    expect(describeSeccompReturn(0x80000000)).toBe('KILL_PROCESS');
    expect(describeSeccompReturn(0)).toBe('KILL_THREAD');
    expect(describeSeccompReturn(0x7fc00000)).toBe('USER_NOTIF');
    expect(describeSeccompReturn(0x00030001)).toBe('TRAP(1)');
    expect(describeSeccompReturn(0x7ffc0000)).toBe('LOG');
  });
});

describe('disassembleSeccomp', () => {
  it('names fields, the architecture and the calls compared with nr', () => {
    const { instructions } = buildSeccompProgram({
      arch: 'aarch64',
      rules: [
        {
          syscall: 'socket',
          action: { type: 'errno', errno: 13 },
          when: [{ arg: 0, width: 32, op: 'eq', value: 1n }],
        },
      ],
      defaultAction: { type: 'allow' },
      foreignAbiAction: { type: 'kill-process' },
    });
    expect(disassembleSeccomp(instructions)).toEqual([
      '0000  ld   [4]                           ; arch',
      '0001  jeq  #0xc00000b7  0003 0002        ; aarch64',
      '0002  ret  KILL_PROCESS',
      '0003  ld   [0]                           ; nr',
      '0004  jeq  #0xc6        0005 0009        ; socket',
      '0005  ld   [16]                          ; args[0] (low)',
      '0006  jeq  #0x1         0007 0008',
      '0007  ret  ERRNO(13)',
      '0008  ret  ALLOW',
      '0009  ret  ALLOW',
    ]);
  });
});
