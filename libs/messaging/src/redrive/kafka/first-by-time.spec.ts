import { firstByTime, mergeByTime } from './first-by-time';

describe(firstByTime.name, () => {
  const at = (item: { at: number }) => item.at;

  it('takes the oldest heads first, a prefix of each list', () => {
    const p0 = [{ at: 1 }, { at: 5 }, { at: 9 }];
    const p1 = [{ at: 2 }, { at: 3 }, { at: 10 }];
    expect(firstByTime([p0, p1], 4, at)).toEqual([p0[0], p1[0], p1[1], p0[1]]);
  });

  it('keeps each list in order even when its times are not', () => {
    const p0 = [{ at: 5 }, { at: 1 }];
    const p1 = [{ at: 3 }];
    expect(firstByTime([p0, p1], 2, at)).toEqual([p1[0], p0[0]]);
  });

  it('stops at the limit or when every list is used up; ties go to the earlier list', () => {
    const lists = [[{ at: 1 }], [{ at: 1 }], []];
    expect(firstByTime(lists, 1, at)).toEqual([lists[0][0]]);
    expect(firstByTime(lists, 10, at)).toHaveLength(2);
  });
});

describe(mergeByTime.name, () => {
  const at = (item: { at: number }) => item.at;

  it('stops where a list read only in part runs out: its next record could be older than the others', () => {
    const p0 = { items: [{ at: 1 }, { at: 2 }], complete: false };
    const p1 = { items: [{ at: 3 }, { at: 4 }], complete: true };
    expect(mergeByTime([p0, p1], 4, at)).toEqual({ taken: p0.items, blocked: [0] });
  });

  it('goes on past a list read whole, and needs nothing more at the limit', () => {
    const p0 = { items: [{ at: 1 }], complete: true };
    const p1 = { items: [{ at: 3 }, { at: 4 }], complete: false };
    expect(mergeByTime([p0, p1], 4, at)).toEqual({ taken: [p0.items[0], ...p1.items], blocked: [1] });
    expect(mergeByTime([p0, p1], 2, at)).toEqual({ taken: [p0.items[0], p1.items[0]], blocked: [] });
  });

  it('names every list it is waiting for', () => {
    const empty = { items: [], complete: false };
    expect(mergeByTime([empty, { items: [{ at: 1 }], complete: true }, empty], 5, at)).toEqual({
      taken: [],
      blocked: [0, 2],
    });
  });
});

describe('mergeByTime with the time of a record not kept', () => {
  const at = (item: { at: number }) => item.at;

  it('goes on past a partition whose next record is known to be younger, and stops at it', () => {
    const p0 = { items: [{ at: 1 }], complete: false, nextAt: 5 };
    const p1 = { items: [{ at: 2 }, { at: 3 }, { at: 6 }], complete: true };
    expect(mergeByTime([p0, p1], 10, at)).toEqual({
      taken: [p0.items[0], p1.items[0], p1.items[1]],
      blocked: [0],
    });
  });

  it('gives a tie to the earlier partition, read or not', () => {
    const later = { items: [{ at: 4 }], complete: true };
    expect(mergeByTime([{ items: [], complete: false, nextAt: 4 }, later], 10, at).taken).toEqual([]);
    expect(mergeByTime([later, { items: [], complete: false, nextAt: 4 }], 10, at).taken).toEqual([
      later.items[0],
    ]);
  });
});
