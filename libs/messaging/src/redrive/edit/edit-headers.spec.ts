import { MessageHeaders } from '../../envelope/message-headers';
import { applyHeaderChanges, lockedHeaderReason, lockedHeaders } from './edit-headers';

describe('edit headers', () => {
  const carry = ['x-tenant', 'tenant', 'priority'];

  describe(lockedHeaderReason.name, () => {
    it.each([
      MessageHeaders.ID,
      MessageHeaders.KEY,
      MessageHeaders.TYPE,
      MessageHeaders.EVENT_VERSION,
      MessageHeaders.TRACEPARENT,
      MessageHeaders.TRACESTATE,
      MessageHeaders.REDRIVE_ID,
      MessageHeaders.REDRIVE_COUNT,
      MessageHeaders.REDRIVE_GROUP,
      MessageHeaders.FAILURE_CATEGORY,
      MessageHeaders.FAILURE_CODE,
      MessageHeaders.ORIGIN_DESTINATION,
      MessageHeaders.SEALED_KEY,
      MessageHeaders.EDIT_OF,
      'MSG.ID',
      'content-type',
      'x-tenant',
      'x-death',
    ])('refuses %s, whatever carryHeaders says', (name) => {
      expect(lockedHeaderReason(name, [...carry, name])).toMatch(/locked/);
    });

    it('refuses a header the redriven copy would not carry', () => {
      expect(lockedHeaderReason('authorization', carry)).toMatch(/not among the headers/);
    });

    it('refuses what is not a header name', () => {
      expect(lockedHeaderReason('a b', ['a b'])).toMatch(/not a header name/);
      expect(lockedHeaderReason('', [''])).toMatch(/not a header name/);
    });

    it('allows a carried application header, compared without case', () => {
      expect(lockedHeaderReason('Tenant', carry)).toBeUndefined();
    });
  });

  describe(lockedHeaders.name, () => {
    it('names every refused change', () => {
      expect(lockedHeaders({ 'msg.id': 'x', tenant: 'a', traceparent: null }, carry)).toHaveLength(2);
      expect(lockedHeaders({ tenant: 'a', priority: null }, carry)).toEqual([]);
    });
  });

  describe(applyHeaderChanges.name, () => {
    it('sets, replaces without case, removes, and links the original', () => {
      const headers = applyHeaderChanges(
        { Tenant: 'old', priority: 'high', 'msg.id': 'm1' },
        { tenant: 'new', priority: null },
        'sha256:abc',
      );
      expect(headers).toEqual({ tenant: 'new', 'msg.id': 'm1', 'msg.edit-of': 'sha256:abc' });
    });
  });
});
