import { Logger } from '@nestjs/common';
import { FakeResponse } from '../../spec-support/console-fakes';
import { consoleHarness, csrfOf, DLQ } from '../../spec-support/console-harness';
import { ConsoleIncidentController } from './console-incident.controller';

describe(ConsoleIncidentController.name, () => {
  beforeEach(() => jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  /** `who`'s search form (alice's by default): a page with its CSRF token, then the form posted. */
  async function searchByKey(
    made: ReturnType<typeof consoleHarness>,
    form: Record<string, string>,
    who: 'alice' | 'victor' = 'alice',
  ) {
    const alice = await made.as(who);
    const page = new FakeResponse();
    await made.incident.search(alice({ params: { queue: DLQ } }), page);
    const res = new FakeResponse();
    await made.incident.searchByKey(
      alice({ params: { queue: DLQ } }, { ...form, _csrf: csrfOf(page.body) }),
      res,
    );
    return res;
  }

  describe('searchByKey', () => {
    it('records a search by key in the audit log with what it found, never the key', async () => {
      const made = consoleHarness();
      const res = await searchByKey(made, { key: 'customer-1' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('1 message(s) found.');
      expect(made.redrive.searches).toEqual([{ key: 'customer-1' }]);
      const entry = made.recorded.at(-1);
      expect(entry).toMatchObject({
        action: 'ACCESS',
        actor: 'alice',
        outcome: 'KEY_SEARCHED',
        source: DLQ,
        detail: 'by key: 1 message(s) found (m-1)',
      });
      expect(JSON.stringify(made.recorded)).not.toContain('customer-1');
      expect(res.body).not.toContain('customer-1');
    });

    it('records a search that found nothing, and one by key and id', async () => {
      const made = consoleHarness();
      await searchByKey(made, { key: 'nobody' });
      expect(made.recorded.at(-1)).toMatchObject({
        outcome: 'KEY_SEARCHED',
        detail: 'by key: 0 message(s) found',
      });
      await searchByKey(made, { key: 'customer-1', messageId: 'm-1' });
      expect(made.recorded.at(-1)?.detail).toBe('by key and message m-1: 1 message(s) found (m-1)');
    });

    // Issue 45 finding 14: any viewer could search by real key, without limit: an oracle that reverses
    // pseudonyms for guessable keys.
    it('refuses a search by key to a role that may not read payloads (403, audited), not one by id', async () => {
      const made = consoleHarness();
      const refused = await searchByKey(made, { key: 'customer-1' }, 'victor');
      expect(refused.statusCode).toBe(403);
      expect(made.redrive.searches).toEqual([]);
      expect(made.recorded.at(-1)).toMatchObject({ actor: 'victor', outcome: 'FORBIDDEN' });
      const byId = await searchByKey(made, { messageId: 'm-1', key: '' }, 'victor');
      expect(byId.statusCode).toBe(200);
      expect(byId.body).toContain('1 message(s) found.');
      expect(byId.body).not.toContain('name="key"');
      expect(made.redrive.searches).toEqual([{ messageId: 'm-1' }]);
    });

    it('allows 20 searches by key per session in 10 minutes, then answers 429 until the oldest is that old', async () => {
      const now = { ms: 0 };
      const made = consoleHarness({ clock: { now: () => now.ms } });
      const alice = await made.as('alice');
      const page = new FakeResponse();
      await made.incident.search(alice({ params: { queue: DLQ } }), page);
      const post = async () => {
        const res = new FakeResponse();
        const form = { key: 'customer-1', _csrf: csrfOf(page.body) };
        await made.incident.searchByKey(alice({ params: { queue: DLQ } }, form), res);
        return res;
      };
      for (let i = 0; i < 20; i++) {
        expect((await post()).statusCode).toBe(200);
        now.ms += 1_000;
      }
      const limited = await post();
      expect(limited.statusCode).toBe(429);
      expect(limited.getHeader('retry-after')).toBe(String(10 * 60 - 20));
      expect(made.redrive.searches).toHaveLength(20);
      expect((await post()).statusCode).toBe(429);
      expect(made.recorded.filter((e) => e.outcome === 'KEY_SEARCH_LIMITED')).toHaveLength(1);
      // Another session of hers has a budget of its own; this one gets one back once the first is old enough.
      const again = await searchByKey(made, { key: 'customer-1' });
      expect(again.statusCode).toBe(200);
      now.ms = 10 * 60_000;
      expect((await post()).statusCode).toBe(200);
      expect((await post()).statusCode).toBe(429);
    });

    it('records nothing for a search by message id only, nor for a queue the console does not show', async () => {
      const made = consoleHarness();
      const alice = await made.as('alice');
      const before = made.recorded.length;
      const byId = new FakeResponse();
      await made.incident.search(alice({ params: { queue: DLQ }, query: { messageId: 'm-1' } }), byId);
      expect(byId.body).toContain('1 message(s) found.');
      const unknown = new FakeResponse();
      await made.incident.search(
        alice({ params: { queue: 'other.dlq' }, query: { messageId: 'm-1' } }),
        unknown,
      );
      expect(unknown.statusCode).toBe(404);
      expect(made.recorded.slice(before)).toEqual([]);
    });
  });

  describe('plan', () => {
    it('says which picked ids were not found on the plan’s page, instead of dropping them', async () => {
      const made = consoleHarness();
      const alice = await made.as('alice');
      const page = new FakeResponse();
      await made.controller.deadLetterQueue(alice({ params: { queue: DLQ } }), page);
      const form = { _csrf: csrfOf(page.body), source: DLQ, by: 'ids', ids: ['m-1', 'm-gone', 'm-typo'] };
      const planned = new FakeResponse();
      await made.incident.plan(alice({}, form), planned);
      expect(planned.statusCode).toBe(303);
      const id = planned.location?.split('/').pop() ?? '';
      const shown = new FakeResponse();
      await made.controller.planPage(alice({ params: { id } }), shown);
      expect(shown.body).toMatch(
        /data-testid="not-found">\s*2 picked id\(s\) not in orders\.billing\.dlq[^:]*: m-gone, m-typo/,
      );
    });
  });
});
