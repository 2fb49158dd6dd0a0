// The exit-code table both command lines share (core/exit-codes.ts): the numbers are a promise to scripts, so
// they are written out here rather than read back from the module.
import { describe, expect, it } from 'vitest';
import { EXIT_CODES, exitCodeOf, worstOutcome, type Outcome } from './exit-codes.ts';

describe('the exit-code table', () => {
  it.each([
    ['ok', 0],
    ['failed', 1],
    ['pending', 2],
    ['not-found', 3],
    ['usage', 64],
    ['temporary', 75],
  ] as const)('%s exits %i', (outcome, code) => {
    expect(exitCodeOf(outcome)).toBe(code);
  });

  it('has those six outcomes and no other', () => {
    expect(Object.keys(EXIT_CODES).sort()).toEqual(['failed', 'not-found', 'ok', 'pending', 'temporary', 'usage']);
  });

  it('with several files the worst wins: usage, failed, temporary, not found, pending, then ok', () => {
    const order: Outcome[] = ['usage', 'failed', 'temporary', 'not-found', 'pending', 'ok'];
    order.forEach((worst, i) => expect(worstOutcome(order.slice(i).reverse())).toBe(worst));
    expect(worstOutcome(['pending', 'ok', 'not-found'])).toBe('not-found');
    expect(worstOutcome(['temporary', 'pending', 'failed'])).toBe('failed');
    expect(worstOutcome([])).toBe('ok');
  });
});
