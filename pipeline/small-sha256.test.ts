import crypto from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { smallSha256 } from './small-sha256.ts';

const reference = (data: Uint8Array) => crypto.hash('sha256', data, 'hex');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('smallSha256', () => {
  it('matches the FIPS 180-2 examples', () => {
    expect(hex(smallSha256(new Uint8Array()))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(hex(smallSha256(Buffer.from('abc')))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(hex(smallSha256(Buffer.from('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('equals node:crypto at every length across the one/two-block and fallback boundaries', () => {
    for (let n = 0; n <= 200; n++) {
      const data = crypto.randomBytes(n);
      expect(hex(smallSha256(data)), `length ${n}`).toBe(reference(data));
    }
  });

  it('equals node:crypto on random inputs, and does not depend on earlier calls', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 130 }), fc.uint8Array({ maxLength: 130 }), (a, b) => {
        const first = hex(smallSha256(a));
        smallSha256(b);
        expect(hex(smallSha256(a))).toBe(first);
        expect(first).toBe(reference(a));
      }),
      { numRuns: 2000 },
    );
  });
});
