import { ConsoleMetrics, figuresOf, parseMetrics } from './console-metrics';

const TEXT = `# HELP messaging_outbox_pending Outbox rows not yet published.
# TYPE messaging_outbox_pending gauge
messaging_outbox_pending{destination="post-create"} 3
messaging_outbox_oldest_pending_age_seconds{destination="post-create"} 12.5
messaging_outbox_published_total{destination="post-create"} 40
messaging_consumer_messages_total{group="g",destination="post-create",outcome="handled"} 38
messaging_consumer_messages_total{group="g",destination="post-create",outcome="duplicate"} 2
messaging_consumer_retries_total{group="g",destination="post-create",mode="inline"} 4
messaging_consumer_failed_attempts_total{group="g",destination="post-create",category="TRANSIENT"} 5
messaging_dead_lettered_total{group="g",destination="post-create",category="TRANSIENT"} 1
`;

describe(figuresOf.name, () => {
  it('turns a service’s metrics into per-destination and per-group figures', () => {
    expect(figuresOf('svc', parseMetrics(TEXT))).toEqual({
      service: 'svc',
      destinations: [
        {
          service: 'svc',
          destination: 'post-create',
          pending: 3,
          oldestPendingAgeSeconds: 12.5,
          publishedTotal: 40,
        },
      ],
      groups: [
        {
          service: 'svc',
          group: 'g',
          destination: 'post-create',
          handled: 38,
          duplicates: 2,
          retries: 4,
          failedByCategory: { TRANSIENT: 5 },
          deadLettered: 1,
        },
      ],
    });
  });
});

describe(ConsoleMetrics.name, () => {
  it('tells published per minute from readings at least a minute apart; lists a source that fails', async () => {
    let now = 0;
    let published = 40;
    const texts: Record<string, () => string> = {
      'http://a/metrics': () => `messaging_outbox_published_total{destination="d"} ${published}\n`,
      'http://b/metrics': () => {
        throw new Error('connection refused');
      },
    };
    const metrics = new ConsoleMetrics(
      [
        { name: 'a', url: 'http://a/metrics' },
        { name: 'b', url: 'http://b/metrics' },
      ],
      () => now,
      async (url) => texts[url](),
    );
    const [first, failing] = await metrics.read();
    expect(first.destinations[0].publishedPerMinute).toBeUndefined();
    expect(failing).toMatchObject({ service: 'b', error: 'connection refused' });
    now = 120_000;
    published = 100;
    expect((await metrics.read())[0].destinations[0].publishedPerMinute).toBe(30);
  });
});
