import { describe, expect, it } from 'vitest';
import { calendarMonth, effectiveLimits, periodAt, type PlanRow } from './plans.js';

const team: PlanRow = {
  id: 'team',
  name: 'Team',
  rpm: 300,
  documents: 10_000,
  api_calls: 1_000_000,
  storage_bytes: 10 * 1024 ** 3,
  custom: false,
};
const enterprise: PlanRow = {
  id: 'enterprise',
  name: 'Enterprise',
  rpm: null,
  documents: null,
  api_calls: null,
  storage_bytes: null,
  custom: true,
};

describe('billing periods', () => {
  it('is the UTC calendar month without a subscription, December rolling into the next year', () => {
    expect(calendarMonth(new Date('2026-12-31T23:59:59.999Z'))).toEqual({
      start: new Date('2026-12-01T00:00:00Z'),
      end: new Date('2027-01-01T00:00:00Z'),
    });
    expect(calendarMonth(new Date('2027-01-01T00:00:00Z')).start).toEqual(new Date('2027-01-01T00:00:00Z'));
  });

  it("is the subscription's period while now lies in it, end excluded", () => {
    const sub = { start: new Date('2026-11-15T10:00:00Z'), end: new Date('2026-12-15T10:00:00Z') };
    expect(periodAt(new Date('2026-11-20T00:00:00Z'), sub)).toBe(sub);
    expect(periodAt(new Date('2026-12-15T10:00:00Z'), sub).start).toEqual(new Date('2026-12-01T00:00:00Z'));
  });
});

describe('effective limits', () => {
  it("takes a plan's own numbers and ignores the tenant's", () => {
    expect(effectiveLimits(team, { documents: 1, api_calls: 1, storage_bytes: 1 }, 5)).toEqual({
      rpm: 300,
      documents: 10_000,
      api_calls: 1_000_000,
      storage_bytes: 10 * 1024 ** 3,
    });
  });

  it("gives Enterprise the tenant's values, its rpm from rate_limit_rpm (S12)", () => {
    expect(effectiveLimits(enterprise, { documents: 7, api_calls: null, storage_bytes: 9 }, 5000)).toEqual({
      rpm: 5000,
      documents: 7,
      api_calls: null,
      storage_bytes: 9,
    });
  });
});
