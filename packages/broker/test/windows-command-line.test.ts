import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  quoteWindowsArg,
  windowsCommandLine,
  windowsEnvironmentBlock,
  withWindowsRuntimeVariables,
} from '../src/backends/windows/windows-command-line.js';

/** The C runtime's argv parser (the CommandLineToArgvW rules for arguments after the first). */
function parseCommandLine(line: string): string[] {
  const args: string[] = [];
  let i = 0;
  while (i < line.length) {
    while (line[i] === ' ' || line[i] === '\t') i += 1;
    if (i >= line.length) break;
    let arg = '';
    let quoted = false;
    while (i < line.length && (quoted || (line[i] !== ' ' && line[i] !== '\t'))) {
      let backslashes = 0;
      while (line[i] === '\\') {
        backslashes += 1;
        i += 1;
      }
      if (line[i] === '"') {
        arg += '\\'.repeat(Math.floor(backslashes / 2));
        if (backslashes % 2 === 1) arg += '"';
        else quoted = !quoted;
        i += 1;
      } else {
        arg += '\\'.repeat(backslashes);
        if (i < line.length && (quoted || (line[i] !== ' ' && line[i] !== '\t'))) {
          arg += line[i];
          i += 1;
        }
      }
    }
    args.push(arg);
  }
  return args;
}

describe('Windows command line', () => {
  it('leaves plain arguments alone and quotes the rest', () => {
    expect(quoteWindowsArg('C:\\node\\node.exe')).toBe('C:\\node\\node.exe');
    expect(quoteWindowsArg('C:\\Program Files\\node.exe')).toBe('"C:\\Program Files\\node.exe"');
    expect(quoteWindowsArg('')).toBe('""');
    expect(quoteWindowsArg('a"b')).toBe('"a\\"b"');
    expect(quoteWindowsArg('C:\\dir with space\\')).toBe('"C:\\dir with space\\\\"');
  });

  it('round-trips any argv through the C runtime parser', () => {
    const arg = fc.string({ unit: fc.constantFrom('a', ' ', '"', '\\', '\t', 'é', 'x') });
    fc.assert(
      fc.property(fc.array(arg, { minLength: 1, maxLength: 5 }), (argv) => {
        expect(parseCommandLine(windowsCommandLine(argv))).toEqual(argv);
      }),
    );
  });
});

describe('Windows environment block', () => {
  it('sorts names without regard to case and ends with an extra NUL', () => {
    expect(windowsEnvironmentBlock({ b: '2', A: '1', Path: 'C:\\x' })).toBe('A=1\0b=2\0Path=C:\\x\0\0');
    expect(windowsEnvironmentBlock({})).toBe('\0');
  });

  it('refuses names or values that would split into other variables', () => {
    expect(() => windowsEnvironmentBlock({ 'A=B': '1' })).toThrow(TypeError);
    expect(() => windowsEnvironmentBlock({ A: 'x\0B=1' })).toThrow(TypeError);
    expect(() => windowsEnvironmentBlock({ '': 'x' })).toThrow(TypeError);
  });

  it('adds only SYSTEMROOT, SYSTEMDRIVE and TEMP from the launcher, never overriding the plan', () => {
    const launcher = {
      SystemRoot: 'C:\\Windows',
      SYSTEMDRIVE: 'C:',
      TEMP: 'C:\\launcher-temp',
      SECRET: 'x',
      HOME: 'h',
    };
    expect(withWindowsRuntimeVariables({ Path: 'p', temp: 'C:\\plan-temp' }, launcher)).toEqual({
      Path: 'p',
      temp: 'C:\\plan-temp',
      SystemRoot: 'C:\\Windows',
      SYSTEMDRIVE: 'C:',
    });
  });
});
