import { InspectedDeadLetter } from '../../redrive/inspected-dead-letter';
import { PlanEdit } from '../../redrive/edit/message-edit';
import { diffSection, editSection } from './edit-views';

const context = { base: '/console', csrfToken: 'tok' };
const letter = {
  message: {
    position: { kind: 'queue', index: 3 },
    messageId: 'm-1',
    type: 'PostCreated',
    failureCategory: 'VALIDATION',
    failureCode: 'X',
    attempts: 1,
    originDestination: 'post-create',
    lastFailureAt: null,
    redriveCount: 0,
    previousRedriveIds: [],
    fingerprint: 'sha256:f',
  },
  firstFailureAt: null,
  headers: {},
} as InspectedDeadLetter;
const planted = '</textarea><script>alert(1)</script>';

describe('edit views', () => {
  describe(editSection.name, () => {
    it('posts to the message at its position, with the CSRF token, its payload escaped in the text area', () => {
      const text = editSection(context, 'q.dlq', letter, {
        text: `{"t":"${planted}"}`,
        bytes: 10,
        truncated: false,
      }).__html;
      expect(text).toContain('action="/console/dead-letters/q.dlq/messages/m-1/edit?at=q3"');
      expect(text).toContain('name="_csrf" value="tok"');
      expect(text).not.toContain('<script>');
      expect(text).toContain('&lt;/textarea&gt;');
    });

    it('offers no form for a payload the page shows only in part', () => {
      const text = editSection(context, 'q.dlq', letter, {
        text: '{',
        bytes: 10,
        truncated: true,
      }).__html;
      expect(text).not.toContain('<form');
      expect(text).toContain('nest-messaging dlq edit');
    });
  });

  describe(diffSection.name, () => {
    it('shows every change, values escaped', () => {
      const edit: PlanEdit = {
        messageId: 'm-1',
        payload: '{}',
        headers: {},
        diff: [
          { path: '/title', op: 'replace', before: JSON.stringify(planted), after: '"ok"' },
          { path: 'header:tenant', op: 'add', after: 'acme' },
        ],
        diffHash: 'sha256:d',
        validated: 'schema',
      };
      const text = diffSection(edit).__html;
      expect(text.match(/data-testid="diff-row"/g)).toHaveLength(2);
      expect(text).not.toContain('<script>');
      expect(text).toContain('header:tenant');
    });
  });
});
