import { cutOffOf, headerValueBytes, ReadBudget } from './read-budget';

describe(ReadBudget.name, () => {
  describe('admit', () => {
    it('keeps messages while their bytes stay within the budget, then refuses every later one', () => {
      const budget = new ReadBudget(100);
      expect([40, 40, 30, 1].map((bytes) => budget.admit(bytes))).toEqual([true, true, false, false]);
      expect(budget.usedBytes).toBe(80);
      expect(budget.exhausted).toBe(true);
      expect(budget.remainingBytes).toBe(0);
    });

    it('keeps the first message even when it alone is larger, and nothing after it', () => {
      const budget = new ReadBudget(100);
      expect(budget.admit(500)).toBe(true);
      expect(budget.exhausted).toBe(true);
      expect(budget.admit(1)).toBe(false);
    });

    it('is exhausted once used up exactly', () => {
      const budget = new ReadBudget(100);
      expect(budget.admit(100)).toBe(true);
      expect(budget.exhausted).toBe(true);
    });
  });

  it('refuses a budget that is not a positive whole number of bytes', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new ReadBudget(bad)).toThrow(RangeError);
    }
  });
});

describe(cutOffOf.name, () => {
  it('says how many more the read would have returned when the budget stopped it', () => {
    const budget = new ReadBudget(10);
    budget.admit(8);
    budget.admit(8);
    expect(cutOffOf(budget, 100, 40, 1)).toEqual({ reason: 'byte-budget', budgetBytes: 10, notRead: 39 });
    expect(cutOffOf(budget, 5, 40, 1)).toEqual({ reason: 'byte-budget', budgetBytes: 10, notRead: 4 });
  });

  it('is undefined when the budget did not stop the read, or nothing more was waiting', () => {
    const fresh = new ReadBudget(10);
    fresh.admit(1);
    expect(cutOffOf(fresh, 100, 40, 1)).toBeUndefined();
    const used = new ReadBudget(10);
    used.admit(10);
    expect(cutOffOf(used, 100, 1, 1)).toBeUndefined();
  });
});

describe(headerValueBytes.name, () => {
  it('counts text, bytes and the names and values of nested tables and arrays', () => {
    expect(headerValueBytes('héllo')).toBe(6);
    expect(headerValueBytes(Buffer.alloc(7))).toBe(7);
    expect(headerValueBytes({ a: 'xx', b: [Buffer.alloc(3), 'y'] })).toBe(1 + 2 + 1 + 3 + 1);
    expect(headerValueBytes(null)).toBe(0);
    expect(headerValueBytes(42)).toBe(8);
  });
});
