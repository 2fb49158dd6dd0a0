// Stripe's ordering rules (store/stripe-order.ts) as a table: which event fields may be written over which row.
// store/test/contract.ts runs the same rules through both engines' StripeEventStore.apply.
import { describe, expect, it } from 'vitest';
import type { SubscriptionFields } from './store.ts';
import { subscriptionWriteRefusal, type SubscriptionRowState } from './stripe-order.ts';

const fields = (subscriptionId: string, status: string): SubscriptionFields => ({
  customerId: 'cus_1',
  subscriptionId,
  priceId: 'price_1',
  status,
  periodStart: null,
  periodEnd: null,
  cancelAtPeriodEnd: false,
});
const row = (sid: string | null, status: string, created: number | null): SubscriptionRowState => ({
  sid,
  status,
  created,
});

describe('Stripe ordering rules', () => {
  const cases: Array<
    [string, SubscriptionRowState | undefined, SubscriptionFields, number, boolean, string | undefined]
  > = [
    ['no row yet: written', undefined, fields('sub_a', 'active'), 100, false, undefined],
    [
      'a row without a subscription: written',
      row(null, 'inactive', null),
      fields('sub_a', 'active'),
      100,
      false,
      undefined,
    ],
    [
      'an older subscription, no longer paying, over the one paid for now: ignored',
      row('sub_b', 'active', 200),
      fields('sub_a', 'canceled'),
      300,
      false,
      'ignored: user u1 pays through sub_b',
    ],
    [
      'another subscription that pays: written',
      row('sub_b', 'active', 200),
      fields('sub_a', 'active'),
      300,
      false,
      undefined,
    ],
    [
      'another subscription over one that no longer pays: written',
      row('sub_b', 'canceled', 200),
      fields('sub_a', 'incomplete'),
      300,
      false,
      undefined,
    ],
    [
      'a canceled subscription revived: ignored',
      row('sub_a', 'canceled', 200),
      fields('sub_a', 'active'),
      300,
      false,
      'ignored: sub_a is canceled',
    ],
    [
      'a canceled subscription canceled again: written',
      row('sub_a', 'canceled', 200),
      fields('sub_a', 'canceled'),
      300,
      false,
      undefined,
    ],
    [
      'an older event of the same subscription: ignored',
      row('sub_a', 'active', 200),
      fields('sub_a', 'past_due'),
      199,
      false,
      'ignored: older than the last event applied to sub_a',
    ],
    ['the same age: written', row('sub_a', 'active', 200), fields('sub_a', 'past_due'), 200, false, undefined],
    [
      'older, but fetched from Stripe now (checkout): written',
      row('sub_a', 'active', 200),
      fields('sub_a', 'past_due'),
      199,
      true,
      undefined,
    ],
    [
      'a row with no event time yet: written',
      row('sub_a', 'active', null),
      fields('sub_a', 'past_due'),
      1,
      false,
      undefined,
    ],
  ];
  it.each(cases)('%s', (_name, current, f, created, fresh, expected) => {
    expect(subscriptionWriteRefusal('u1', current, f, created, fresh)).toBe(expected);
  });
});
