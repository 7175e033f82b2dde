import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OutputCap } from '../src/runner/output-cap.js';

describe('OutputCap', () => {
  it('delivers exactly the first cap bytes, in order, whatever the chunking', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 50 }), { maxLength: 20 }),
        fc.nat(400),
        (chunks, limit) => {
          const cap = new OutputCap(limit);
          const all = Buffer.concat(chunks.map((chunk) => Buffer.from(chunk)));
          const delivered = Buffer.concat(chunks.map((chunk) => cap.take(Buffer.from(chunk))));
          expect(delivered).toEqual(all.subarray(0, limit));
          // Reached once the output got to the cap; output that stayed under it is not cut.
          expect(cap.reached).toBe(all.length >= limit && (limit > 0 || chunks.length > 0));
        },
      ),
    );
  });

  it('without a cap passes everything', () => {
    const cap = new OutputCap(null);
    expect(cap.take(Buffer.alloc(1 << 20)).length).toBe(1 << 20);
    expect(cap.reached).toBe(false);
  });
});
