import { NotificationView } from './blog-client';
import { checkDelivery, percentile, statusSummary } from './blog-scenario';

function notification(subscriberId: number, postId: number, latencyMs = 10): NotificationView {
  const occurredAt = new Date(Date.UTC(2026, 0, 1));
  return {
    id: postId,
    subscriberId,
    postId,
    authorId: 1,
    title: `post ${postId}`,
    eventId: '00000000-0000-7000-8000-000000000000',
    occurredAt: occurredAt.toISOString(),
    notifiedAt: new Date(occurredAt.getTime() + latencyMs).toISOString(),
  };
}

describe(checkDelivery.name, () => {
  it('is complete and exactly once when every subscriber has every post once', () => {
    const check = checkDelivery(
      new Map([
        [10, [notification(10, 1, 5), notification(10, 2, 7)]],
        [11, [notification(11, 1), notification(11, 2), notification(11, 99)]],
      ]),
      [10, 11],
      [1, 2],
    );
    expect(check).toMatchObject({ delivered: 4, expected: 4, complete: true, exactlyOnce: true });
    expect(check.perSubscriber[0].latenciesMs).toEqual([5, 7]);
  });

  it('names missing posts and posts notified twice', () => {
    const check = checkDelivery(
      new Map([
        [10, [notification(10, 1), notification(10, 1)]],
        [11, []],
      ]),
      [10, 11],
      [1, 2],
    );
    expect(check.complete).toBe(false);
    expect(check.exactlyOnce).toBe(false);
    expect(check.perSubscriber.map((s) => ({ missing: s.missing, twice: s.twice }))).toEqual([
      { missing: [2], twice: [1] },
      { missing: [1, 2], twice: [] },
    ]);
  });
});

describe(percentile.name, () => {
  it('takes the nearest rank', () => {
    const values = [5, 1, 4, 2, 3, 6, 7, 8, 9, 10];
    expect(percentile(values, 50)).toBe(5);
    expect(percentile(values, 99)).toBe(10);
    expect(percentile([], 50)).toBeNaN();
  });
});

describe(statusSummary.name, () => {
  it('counts statuses, unanswered requests included', () => {
    expect(statusSummary([{ status: 201 }, { status: 0 }, { status: 201 }])).toBe('1 × no answer, 2 × 201');
  });
});
