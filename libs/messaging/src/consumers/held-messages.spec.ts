import { FakeClock } from '../common/fake-clock';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { resolveMessagingOptions } from '../options/resolve-messaging-options';
import { HeldMessages } from './held-messages';

const options = resolveMessagingOptions({
  serviceName: 'unit',
  transport: { kind: 'kafka', brokers: ['127.0.0.1:9092'] },
  consumers: { versionHold: { windowMs: 600_000, initialDelayMs: 1_000, maxDelayMs: 10_000 } },
});

function held(clock = new FakeClock()) {
  const metrics = new MessagingMetrics();
  return { clock, metrics, held: new HeldMessages(clock, options, metrics) };
}

describe(HeldMessages.name, () => {
  describe('hold', () => {
    it('counts the holds of a message and the time since its first', async () => {
      const { clock, held: h } = held();
      expect(h.hold('g', 'd', 'm1', 'version')).toEqual({ heldForMs: 0, hold: 1 });
      await clock.advance(4_000);
      expect(h.hold('g', 'd', 'm1', 'version')).toEqual({ heldForMs: 4_000, hold: 2 });
      expect(h.hold('other-group', 'd', 'm1', 'version')).toEqual({ heldForMs: 0, hold: 1 });
    });

    it('forgets a message not looked at again within its longest wait and a minute (it went elsewhere)', async () => {
      const { clock, held: h } = held();
      h.hold('g', 'd', 'm1', 'upcast');
      await clock.advance(10_000 + 60_000);
      expect(h.heldNow().count).toBe(1);
      await clock.advance(1);
      expect(h.heldNow().count).toBe(0);
      expect(h.hold('g', 'd', 'm1', 'upcast')).toEqual({ heldForMs: 0, hold: 1 }); // its window starts again
    });

    it('tracks at most 10000, forgetting the one looked at least recently', () => {
      const { held: h } = held();
      for (let i = 0; i < 10_000; i++) h.hold('g', 'd', `m${i}`, 'version');
      h.hold('g', 'd', 'm0', 'version'); // looked at again: now the most recent
      h.hold('g', 'd', 'new', 'version');
      expect(h.heldNow().count).toBe(10_000);
      expect(h.hold('g', 'd', 'm0', 'version').hold).toBe(3);
      expect(h.hold('g', 'd', 'm1', 'version').hold).toBe(1);
    });
  });

  describe('release', () => {
    it('says how long a message was held, and nothing for one that was not', async () => {
      const { clock, held: h } = held();
      h.hold('g', 'd', 'm1', 'version');
      await clock.advance(2_500);
      expect(h.release('g', 'm1')).toBe(2_500);
      expect(h.release('g', 'm1')).toBeUndefined();
      expect(h.heldNow()).toEqual({ count: 0, oldestHeldMs: 0, windowMs: 600_000 });
    });
  });

  describe('heldNow', () => {
    it("exports the count per reason and the oldest one's age on scrape", async () => {
      const { clock, metrics, held: h } = held();
      h.hold('g', 'd', 'm1', 'version');
      await clock.advance(3_000);
      h.hold('g', 'd', 'm2', 'version');
      h.hold('g', 'd', 'm3', 'upcast');
      expect(h.heldNow()).toEqual({ count: 3, oldestHeldMs: 3_000, windowMs: 600_000 });
      const text = await metrics.metrics();
      expect(text).toContain(
        'messaging_consumer_held_messages{group="g",destination="d",reason="version"} 2',
      );
      expect(text).toContain('messaging_consumer_held_messages{group="g",destination="d",reason="upcast"} 1');
      expect(text).toContain('messaging_consumer_oldest_held_age_seconds 3');
      h.release('g', 'm1');
      h.release('g', 'm2');
      expect(await metrics.metrics()).not.toContain('reason="version"} ');
    });
  });
});
