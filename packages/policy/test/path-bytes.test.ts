import { describe, expect, it } from 'vitest';
import { decodePathBytes, encodePathBytes, fsPathArg } from '../src/path-bytes.js';

describe('path bytes', () => {
  it('keeps valid UTF-8 as text', () => {
    expect(decodePathBytes(Buffer.from('café/€/😀'))).toBe('café/€/😀');
    expect(fsPathArg('/a/café')).toBe('/a/café');
  });
  it('escapes invalid bytes and restores them exactly', () => {
    const bytes = Buffer.from([0x2f, 0x61, 0xff, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0xe2, 0x82]);
    const text = decodePathBytes(bytes);
    expect(text).toBe('/a\uDCFF\uDCC3(\uDCED\uDCA0\uDC80\uDCE2\uDC82');
    expect([...encodePathBytes(text)]).toEqual([...bytes]);
    expect(Buffer.isBuffer(fsPathArg(text))).toBe(true);
  });
  it('keeps a leading BOM', () => {
    expect(decodePathBytes(Buffer.from([0xef, 0xbb, 0xbf, 0x61]))).toBe('\uFEFFa');
  });
  it('refuses an unpaired surrogate that is not an escape', () => {
    expect(() => encodePathBytes('/a\uD800')).toThrow(/unpaired/);
  });
});
