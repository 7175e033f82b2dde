import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkSeccompProgram, runSeccompProgram } from '../../src/seccomp/seccomp-decode.js';
import {
  type ArgCondition,
  buildSeccompProgram,
  type SeccompFilterSpec,
  type SyscallRule,
  seccompReturnValue,
} from '../../src/seccomp/seccomp-program.js';
import { SECCOMP_ABIS, type SeccompArch } from '../../src/seccomp/syscall-abi.js';

const ALLOW = 0x7fff0000;
const KILL_PROCESS = 0x80000000;
const errno = (n: number) => (0x00050000 | n) >>> 0;
const I386 = 0x40000003;
const ARM = 0x40000028;

const spec = (arch: SeccompArch, rules: SeccompFilterSpec['rules']): SeccompFilterSpec => ({
  arch,
  rules,
  defaultAction: { type: 'allow' },
  foreignAbiAction: { type: 'kill-process' },
});

function run(filter: SeccompFilterSpec, nr: number, args: bigint[] = [], arch?: number): number {
  const { instructions } = buildSeccompProgram(filter);
  checkSeccompProgram(instructions);
  return runSeccompProgram(instructions, { nr, arch: arch ?? SECCOMP_ABIS[filter.arch].auditArch, args });
}

describe.each(['x86_64', 'aarch64'] as const)('seccomp program on %s', (arch) => {
  const abi = SECCOMP_ABIS[arch];
  const filter = spec(arch, [{ syscall: 'bpf', action: { type: 'errno', errno: 1 } }]);

  it('gives a named call its action and every other call the default', () => {
    expect(run(filter, abi.syscalls.bpf)).toBe(errno(1));
    expect(run(filter, abi.syscalls.socket)).toBe(ALLOW);
    expect(run(filter, 0)).toBe(ALLOW);
  });

  it('gives any other architecture the foreign-ABI action, whatever the number', () => {
    for (const other of [
      I386,
      ARM,
      arch === 'x86_64' ? SECCOMP_ABIS.aarch64.auditArch : SECCOMP_ABIS.x86_64.auditArch,
    ])
      for (const nr of [0, abi.syscalls.bpf, 102]) expect(run(filter, nr, [], other)).toBe(KILL_PROCESS);
  });

  it('lets -1 (no call: the kernel answers ENOSYS) through to the default', () => {
    expect(run(filter, -1)).toBe(ALLOW);
  });
});

describe('x32 on x86_64', () => {
  const filter = spec('x86_64', [{ syscall: 'socket', action: { type: 'errno', errno: 13 } }]);
  it('treats a number with bit 30 set as a foreign ABI (x32 socket is 0x40000029)', () => {
    expect(run(filter, 0x40000000 | 41)).toBe(KILL_PROCESS);
    expect(run(filter, 0x40000000)).toBe(KILL_PROCESS);
    expect(run(filter, 0x7fffffff)).toBe(KILL_PROCESS);
    expect(run(filter, 41)).toBe(errno(13));
  });
  it('has no such check on aarch64, where bit 30 means nothing', () => {
    const arm = spec('aarch64', [{ syscall: 'socket', action: { type: 'errno', errno: 13 } }]);
    expect(run(arm, 0x40000000 | 198)).toBe(ALLOW);
  });
});

describe('rules with conditions', () => {
  it('tries the rules of a call in order and falls back to the default when none holds', () => {
    const filter = spec('x86_64', [
      {
        syscall: 'socket',
        action: { type: 'errno', errno: 13 },
        when: [{ arg: 0, width: 32, op: 'eq', value: 1n }],
      },
      {
        syscall: 'socket',
        action: { type: 'errno', errno: 97 },
        when: [{ arg: 0, width: 32, op: 'eq', value: 16n }],
      },
      { syscall: 'socket', action: { type: 'log' }, when: [{ arg: 1, width: 32, op: 'eq', value: 3n }] },
      { syscall: 'keyctl', action: { type: 'errno', errno: 1 } },
    ]);
    expect(run(filter, 41, [1n, 3n])).toBe(errno(13));
    expect(run(filter, 41, [16n, 3n])).toBe(errno(97));
    expect(run(filter, 41, [2n, 3n])).toBe(0x7ffc0000);
    expect(run(filter, 41, [2n, 1n])).toBe(ALLOW);
    expect(run(filter, 250)).toBe(errno(1));
  });

  it('needs every condition of a rule to hold', () => {
    const filter = spec('x86_64', [
      {
        syscall: 'socket',
        action: { type: 'kill-process' },
        when: [
          { arg: 0, width: 32, op: 'eq', value: 1n },
          { arg: 1, width: 32, op: 'masked-eq', mask: 0xfn, value: 2n },
        ],
      },
    ]);
    expect(run(filter, 41, [1n, 2n | 0x80000n])).toBe(KILL_PROCESS);
    expect(run(filter, 41, [1n, 1n])).toBe(ALLOW);
    expect(run(filter, 41, [2n, 2n])).toBe(ALLOW);
  });

  it('compares a 32-bit argument by its low word only, as the kernel reads an int', () => {
    const filter = spec('x86_64', [
      {
        syscall: 'socket',
        action: { type: 'errno', errno: 13 },
        when: [{ arg: 0, width: 32, op: 'eq', value: 1n }],
      },
    ]);
    expect(run(filter, 41, [0xffffffff00000001n])).toBe(errno(13));
    expect(run(filter, 41, [0x100000000n])).toBe(ALLOW);
  });

  it('jumps over a call whose rules are longer than a conditional jump reaches', () => {
    const rules = Array.from(
      { length: 120 },
      (_, i): SyscallRule => ({
        syscall: 'ioctl',
        action: { type: 'errno', errno: 1 + (i % 100) },
        when: [{ arg: 1, width: 32, op: 'eq', value: BigInt(1000 + i) }],
      }),
    );
    const filter = spec('x86_64', [...rules, { syscall: 'bpf', action: { type: 'errno', errno: 2 } }]);
    expect(buildSeccompProgram(filter).instructions.length).toBeGreaterThan(255);
    expect(run(filter, 16, [0n, 1000n + 119n])).toBe(errno(1 + 19));
    expect(run(filter, 16, [0n, 5n])).toBe(ALLOW);
    expect(run(filter, 321)).toBe(errno(2));
    expect(run(filter, 41)).toBe(ALLOW);
  });
});

/** What a condition means, on full 64-bit registers. */
function holds(condition: ArgCondition, register: bigint): boolean {
  const width = condition.width === 32 ? 0xffffffffn : 0xffffffffffffffffn;
  const a = register & width;
  const v = condition.value;
  switch (condition.op) {
    case 'eq':
      return a === v;
    case 'ne':
      return a !== v;
    case 'gt':
      return a > v;
    case 'ge':
      return a >= v;
    case 'lt':
      return a < v;
    case 'le':
      return a <= v;
    case 'masked-eq':
      return (a & (condition.mask as bigint)) === v;
  }
}

describe('every comparison, against its meaning', () => {
  const word = fc.oneof(
    fc.constantFrom(0n, 1n, 0xffffffffn, 0x80000000n, 0x7fffffffn),
    fc.bigInt(0n, 0xffffffffn),
  );
  const u64 = fc.tuple(word, word).map(([high, low]) => (high << 32n) | low);
  const clamp = (v: bigint, max: bigint) => (v < 0n ? 0n : v > max ? max : v);

  it('matches unsigned bigint semantics for every op and width', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('eq', 'ne', 'gt', 'ge', 'lt', 'le', 'masked-eq'),
        fc.constantFrom(32, 64),
        u64,
        u64,
        u64,
        fc.option(fc.constantFrom(-1n, 0n, 1n)),
        (op: ArgCondition['op'], width: 32 | 64, rawValue, register, rawMask, delta) => {
          const limit = width === 32 ? 0xffffffffn : 0xffffffffffffffffn;
          const mask = rawMask & limit;
          let value = rawValue & limit;
          if (op === 'masked-eq') value &= mask;
          // Near values exercise the boundaries (equal words, one above, one below); the bits above
          // a 32-bit width stay random, as a program may leave them.
          const arg = delta === null ? register : (register & ~limit) | clamp(value + delta, limit);
          const condition: ArgCondition = {
            arg: 2,
            width,
            op,
            value,
            ...(op === 'masked-eq' ? { mask } : {}),
          };
          const filter = spec('x86_64', [
            { syscall: 'ioctl', action: { type: 'errno', errno: 5 }, when: [condition] },
          ]);
          const expected = holds(condition, arg) ? errno(5) : ALLOW;
          expect(run(filter, 16, [0n, 0n, arg])).toBe(expected);
        },
      ),
      { numRuns: 600 },
    );
  });
});

describe('spec validation', () => {
  const bad = (condition: ArgCondition) =>
    spec('x86_64', [{ syscall: 'ioctl', action: { type: 'allow' }, when: [condition] }]);
  it('refuses an errno outside 1..4095, an argument index past 5, values wider than the width, a stray mask', () => {
    expect(() => seccompReturnValue({ type: 'errno', errno: 0 })).toThrow(/errno 0/);
    expect(() => seccompReturnValue({ type: 'errno', errno: 4096 })).toThrow(/errno 4096/);
    expect(() => buildSeccompProgram(bad({ arg: 6 as 5, width: 32, op: 'eq', value: 1n }))).toThrow(
      /argument 6/,
    );
    expect(() => buildSeccompProgram(bad({ arg: 0, width: 32, op: 'eq', value: 1n << 32n }))).toThrow(
      /value/,
    );
    expect(() => buildSeccompProgram(bad({ arg: 0, width: 64, op: 'eq', value: -1n }))).toThrow(/value/);
    expect(() => buildSeccompProgram(bad({ arg: 0, width: 32, op: 'eq', value: 1n, mask: 1n }))).toThrow(
      /mask on eq/,
    );
    expect(() => buildSeccompProgram(bad({ arg: 0, width: 32, op: 'masked-eq', value: 1n }))).toThrow(/mask/);
    expect(() =>
      buildSeccompProgram(bad({ arg: 0, width: 32, op: 'masked-eq', value: 3n, mask: 1n })),
    ).toThrow(/outside its mask/);
  });
});
