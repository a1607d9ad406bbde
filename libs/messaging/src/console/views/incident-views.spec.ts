import { InspectedDeadLetter } from '../../redrive/inspected-dead-letter';
import { allLettersPage, archivePage, groupsPage, searchPage } from './incident-views';
import { deadLetterPage, deadLetterQueuePage } from './dead-letter-views';

const viewer = { base: '/console', user: { name: 'victor', roles: ['viewer' as const] }, csrfToken: 't' };
const operator = { base: '/console', user: { name: 'alice', roles: ['operator' as const] }, csrfToken: 't' };
const group = {
  category: 'AUTHORIZATION',
  code: 'QueryFailedError/42501',
  count: 3,
  firstSeen: '2026-01-01T10:00:00.000Z',
  lastSeen: '2026-01-01T10:05:00.000Z',
  types: ['PostCreated'],
};

function letter(index: number): InspectedDeadLetter {
  return {
    message: {
      position: { kind: 'queue', index },
      messageId: `m${index}`,
      type: 'PostCreated',
      failureCategory: 'AUTHORIZATION',
      failureCode: 'QueryFailedError/42501',
      attempts: 1,
      originDestination: 'post-create',
      lastFailureAt: '2026-01-01T10:05:00.000Z',
      redriveCount: 0,
      previousRedriveIds: [],
      fingerprint: 'sha256:x',
    },
    firstFailureAt: null,
    headers: {},
  };
}

describe('incident views', () => {
  describe(groupsPage.name, () => {
    it('offers an operator a redrive and a discard plan of the group, a viewer none', () => {
      const forOperator = groupsPage(operator, 'q.g.dlq', [group], 3, 3, true);
      expect(forOperator).toContain('Plan redrive of QueryFailedError/42501');
      expect(forOperator).toContain('Plan discard of QueryFailedError/42501');
      expect(forOperator).toContain('name="code" value="QueryFailedError/42501"');
      expect(groupsPage(viewer, 'q.g.dlq', [group], 3, 3, false)).not.toContain('Plan ');
    });
  });

  describe(allLettersPage.name, () => {
    it('shows one page of 50 with links to the others, and boxes to pick for an operator', () => {
      const letters = Array.from({ length: 120 }, (_, i) => letter(i));
      const second = allLettersPage(operator, 'q.g.dlq', letters, 130, 2, true);
      expect(second).toContain('Page 2 of 3 (120 of 130 waiting read)');
      expect(second).toContain('>m50<');
      expect(second).not.toContain('>m49<');
      expect(second).not.toContain('>m100<');
      expect(second).toContain('value="m99"');
      expect(second).toContain('?page=1');
      expect(second).toContain('?page=3');
      expect(allLettersPage(viewer, 'q.g.dlq', letters, 130, 1, false)).not.toContain('type="checkbox"');
    });
  });

  describe(searchPage.name, () => {
    it('posts the key (never in a URL) and does not show it again', () => {
      const page = searchPage(operator, 'q.g.dlq', { messageId: 'm1' }, [letter(1)], true, true);
      expect(page).toContain('method="post" action="/console/dead-letters/q.g.dlq/search"');
      expect(page).toContain('type="password"');
      expect(page).toContain('1 message(s) found.');
      expect(page).toContain('Plan discard of these');
    });
  });

  describe('a read the byte budget stopped (issue 45, finding 7)', () => {
    const cutOff = { reason: 'byte-budget' as const, budgetBytes: 16 * 1024 * 1024, notRead: 42 };
    const said = '42 more not shown: byte budget of 16 MiB reached';

    it('says on every page that lists dead letters how many more were not shown, and only then', () => {
      const letters = [letter(0)];
      const pages = (c?: typeof cutOff) => [
        groupsPage(operator, 'q.g.dlq', [group], 43, 1, true, c),
        allLettersPage(operator, 'q.g.dlq', letters, 43, 1, true, c),
        searchPage(operator, 'q.g.dlq', { messageId: 'm0' }, letters, true, true, c),
        archivePage(viewer, 'q.g.dlq', letters, 43, c),
        deadLetterQueuePage(operator, 'q.g.dlq', letters, {}, true, 0, c),
      ];
      for (const page of pages(cutOff)) expect(page).toContain(said);
      for (const page of pages()) expect(page).not.toContain('byte budget');
    });

    it('says how many headers of a message were left out', () => {
      const page = deadLetterPage(viewer, 'q.g.dlq', { ...letter(0), headersNotShown: 9_936 }, undefined);
      expect(page).toContain('9936 more header(s) not shown: too many or too large.');
      expect(deadLetterPage(viewer, 'q.g.dlq', letter(0), undefined)).not.toContain('not shown: too many');
    });
  });
});
