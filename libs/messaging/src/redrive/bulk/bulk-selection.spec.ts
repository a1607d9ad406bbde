import { PlannedMessage } from '../redrive-plan';
import { BulkDigest, bulkDigest, BulkItem } from './bulk-selection';

function message(i: number, over: Partial<PlannedMessage> = {}): PlannedMessage {
  return {
    position: { kind: 'queue', index: i },
    messageId: `m-${i}`,
    type: 'OrderPlaced',
    failureCategory: 'TRANSIENT',
    failureCode: 'E',
    attempts: 3,
    originDestination: 'orders',
    lastFailureAt: '2026-12-07T00:00:00.000Z',
    redriveCount: 0,
    previousRedriveIds: [],
    fingerprint: `sha256:${i}`,
    ...over,
  };
}

const items = (n: number): BulkItem[] =>
  Array.from({ length: n }, (_, i) => ({ seq: i, role: 'take' as const, message: message(i) }));

describe('bulk digest', () => {
  it('is the same fed in one go or page by page, and whatever the key order of a description', () => {
    const all = items(1_203);
    const paged = new BulkDigest();
    for (let i = 0; i < all.length; i += 500) paged.add(all.slice(i, i + 500));
    expect(paged.count).toBe(1_203);
    expect(paged.digest()).toBe(bulkDigest(all));
    const reordered = all.map((item) => ({
      ...item,
      message: Object.fromEntries(Object.entries(item.message).reverse()) as unknown as PlannedMessage,
    }));
    expect(bulkDigest(reordered)).toBe(bulkDigest(all));
  });

  it('changes when an item is changed, removed, added, reordered or given another role', () => {
    const all = items(20);
    const digest = bulkDigest(all);
    const changed = all.map((item, i) =>
      i === 7 ? { ...item, message: message(7, { failureCode: 'OTHER' }) } : item,
    );
    expect(bulkDigest(changed)).not.toBe(digest);
    expect(bulkDigest(all.filter((_, i) => i !== 7))).not.toBe(digest);
    expect(bulkDigest([...all, { seq: 20, role: 'take', message: message(20) }])).not.toBe(digest);
    expect(bulkDigest(all.map((item, i) => (i === 3 ? { ...item, role: 'keep' as const } : item)))).not.toBe(
      digest,
    );
    const swapped = all.map((item, i) => ({ ...item, message: all[i === 3 ? 4 : i === 4 ? 3 : i].message }));
    expect(bulkDigest(swapped)).not.toBe(digest);
  });

  it('refuses items out of order (a store that pages wrongly cannot pass for the plan)', () => {
    const digest = new BulkDigest();
    digest.add(items(3));
    expect(() => digest.add([{ seq: 2, role: 'take', message: message(2) }])).toThrow(RangeError);
  });
});
