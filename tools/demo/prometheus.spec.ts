import { metricValue } from './prometheus';

describe(metricValue.name, () => {
  const text = [
    '# HELP messaging_consumer_messages_total Deliveries handled.',
    '# TYPE messaging_consumer_messages_total counter',
    'messaging_consumer_messages_total{group="g",destination="post-create",outcome="handled"} 10',
    'messaging_consumer_messages_total{group="g",destination="post-create",outcome="duplicate"} 2',
    'messaging_consumer_messages_total{group="h",destination="other",outcome="handled"} 1',
    'messaging_outbox_pending 3',
  ].join('\n');

  it('sums the samples whose labels match', () => {
    expect(metricValue(text, 'messaging_consumer_messages_total')).toBe(13);
    expect(metricValue(text, 'messaging_consumer_messages_total', { outcome: 'handled' })).toBe(11);
    expect(metricValue(text, 'messaging_consumer_messages_total', { group: 'g', outcome: 'duplicate' })).toBe(
      2,
    );
    expect(metricValue(text, 'messaging_outbox_pending')).toBe(3);
  });

  it('is 0 for a metric without samples', () => {
    expect(metricValue(text, 'messaging_outbox_published_total')).toBe(0);
  });
});
