import { Logger } from '@nestjs/common';
import { FakeResponse } from '../../spec-support/console-fakes';
import { consoleHarness, csrfOf, DLQ } from '../../spec-support/console-harness';
import { ConsoleIncidentController } from './console-incident.controller';

describe(ConsoleIncidentController.name, () => {
  beforeEach(() => jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  /** alice's search form: a page with its CSRF token, then the form posted. */
  async function searchByKey(made: ReturnType<typeof consoleHarness>, form: Record<string, string>) {
    const alice = await made.as('alice');
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
