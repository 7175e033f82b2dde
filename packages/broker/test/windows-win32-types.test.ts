import koffi from 'koffi';
import { describe, expect, it } from 'vitest';
import { defineWin32Types } from '../src/backends/windows/launcher/win32-types.js';

// koffi lays structures out with the host's rules; on a 64-bit host these must be the sizes and
// offsets of the x64 Windows SDK, or CreateProcessAsUserW and friends would read garbage.
describe('Win32 structure layouts (64-bit hosts, as every CI runner)', () => {
  const types = defineWin32Types(koffi);

  it('match the Windows SDK sizes', () => {
    expect(koffi.sizeof('void *')).toBe(8);
    expect(koffi.sizeof(types.SID_AND_ATTRIBUTES)).toBe(16);
    expect(koffi.sizeof(types.EXPLICIT_ACCESS_W)).toBe(48);
    expect(koffi.offsetof(types.EXPLICIT_ACCESS_W, 'Trustee')).toBe(16);
    expect(koffi.sizeof(types.TOKEN_DEFAULT_DACL)).toBe(8);
    expect(koffi.sizeof(types.STARTUPINFOW)).toBe(104);
    expect(koffi.offsetof(types.STARTUPINFOW, 'dwFlags')).toBe(60);
    expect(koffi.offsetof(types.STARTUPINFOW, 'hStdInput')).toBe(80);
    expect(koffi.sizeof(types.PROCESS_INFORMATION)).toBe(24);
    expect(koffi.sizeof(types.JOBOBJECT_EXTENDED_LIMIT_INFORMATION)).toBe(144);
  });
});
