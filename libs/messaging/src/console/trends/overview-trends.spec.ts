import type { ServiceFigures } from '../console-metrics';
import { ConsoleTrends } from './overview-trends';

const start = Date.parse('2026-12-07T03:00:00Z');

function service(pending: number, error?: string): ServiceFigures {
  if (error) return { service: 'post-service', error, destinations: [], groups: [] };
  const destination = {
    service: 'post-service',
    destination: 'post-create',
    pending,
    oldestPendingAgeSeconds: 1,
    publishedTotal: 9,
  };
  const group = {
    ...{
      service: 'post-service',
      group: 'g',
      destination: 'post-create',
      handled: 1,
      duplicates: 0,
      retries: 0,
    },
    ...{ failedByCategory: {}, deadLettered: 0, meanLagSeconds: 0.5 },
  };
  return { service: 'post-service', destinations: [destination], groups: [group] };
}

describe(ConsoleTrends.name, () => {
  describe('observe', () => {
    it('keeps each figure over time and says since when a backlog grows', () => {
      let now = start;
      const trends = new ConsoleTrends({ now: () => now }, { rises: 3 });
      let seen = trends.observe([service(5)], []);
      for (const pending of [5, 5, 6, 9, 12]) {
        now += 30_000;
        seen = trends.observe([service(pending)], [{ name: 'q.dlq', exists: true, depth: pending }]);
      }
      const pending = seen.of('pending', 'post-service', 'post-create');
      expect(pending?.samples.map((s) => s.value)).toEqual([5, 5, 5, 6, 9, 12]);
      expect(pending).toMatchObject({ from: now - 60 * 60_000, to: now, growingSince: start + 60_000 });
      expect(seen.of('oldestPending', 'post-service', 'post-create')?.growingSince).toBeUndefined();
      expect(seen.of('meanLag', 'post-service', 'g', 'post-create')?.samples).toHaveLength(6);
      expect(seen.of('dlqDepth', 'q.dlq')?.samples).toHaveLength(5);
    });

    it('adds no reading for a service that is down, nor for a DLQ that is missing', () => {
      let now = start;
      const trends = new ConsoleTrends({ now: () => now });
      trends.observe([service(1)], []);
      now += 30_000;
      const seen = trends.observe([service(0, 'no answer')], [{ name: 'gone.dlq', exists: false, depth: 0 }]);
      expect(seen.of('pending', 'post-service', 'post-create')?.samples).toEqual([{ at: start, value: 1 }]);
      expect(seen.of('dlqDepth', 'gone.dlq')).toBeUndefined();
    });
  });
});
