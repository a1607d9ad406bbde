import { isMessageId, newMessageId } from './message-id';

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NOW = new Date('2031-05-06T07:08:09.010Z');

/** The 48-bit Unix-ms timestamp a UUIDv7 starts with. */
function timestampOf(id: string): number {
  return Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}

describe('message-id', () => {
  describe(newMessageId.name, () => {
    // jest's fake timers, not a FakeClock: uuid's v7 reads Date.now() itself (given a time, it would drop its
    // ordering of ids within one millisecond), so the library does not pass it the injected clock's.
    beforeEach(() => jest.useFakeTimers({ now: NOW }));
    afterEach(() => jest.useRealTimers());

    it('returns a lower-case UUID of version 7 with the RFC 9562 variant', () => {
      const id = newMessageId();
      expect(id).toMatch(UUID_SHAPE);
      expect(id[14]).toBe('7');
      expect(['8', '9', 'a', 'b']).toContain(id[19]);
    });

    it('starts with the current time in ms', () => {
      expect(timestampOf(newMessageId())).toBe(NOW.getTime());
    });

    it('returns 1000 unique ids in creation order within one millisecond', () => {
      const ids = Array.from({ length: 1000 }, () => newMessageId());
      expect(new Set(ids).size).toBe(1000);
      expect([...ids].sort()).toEqual(ids);
      for (let i = 1; i < ids.length; i += 1) {
        expect(timestampOf(ids[i])).toBeGreaterThanOrEqual(timestampOf(ids[i - 1]));
      }
    });

    it('returns 1000 unique ids with non-decreasing timestamps while the clock moves', () => {
      const ids: string[] = [];
      for (let i = 0; i < 1000; i += 1) {
        ids.push(newMessageId());
        if (i % 7 === 0) jest.advanceTimersByTime(1);
      }
      expect(new Set(ids).size).toBe(1000);
      const stamps = ids.map(timestampOf);
      for (let i = 1; i < stamps.length; i += 1) {
        expect(stamps[i]).toBeGreaterThanOrEqual(stamps[i - 1]);
      }
      expect(stamps[stamps.length - 1]).toBeGreaterThan(stamps[0]);
      expect(ids.every(isMessageId)).toBe(true);
    });
  });

  describe(isMessageId.name, () => {
    it('refuses the nil and the max UUID', () => {
      expect(isMessageId('00000000-0000-0000-0000-000000000000')).toBe(false);
      expect(isMessageId('ffffffff-ffff-ffff-ffff-ffffffffffff')).toBe(false);
    });

    it.each([
      ['a version 7 UUID', '0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b'],
      ['a version 4 UUID', '9b2e4c1a-3f5d-4a7b-9c8d-1e2f3a4b5c6d'],
      ['a version 1 UUID', 'c232ab00-9414-11ec-b3c8-9f68deced846'],
      ['an upper-case UUID', '9B2E4C1A-3F5D-4A7B-9C8D-1E2F3A4B5C6D'],
    ])('accepts %s', (_, value) => {
      expect(isMessageId(value)).toBe(true);
    });

    it('accepts what newMessageId returns', () => {
      expect(isMessageId(newMessageId())).toBe(true);
    });

    it.each([
      ['an empty string', ''],
      ['junk', 'not-a-uuid'],
      ['a UUID without dashes', '0190a5b27c3d7e4f8a1b2c3d4e5f6a7b'],
      ['a UUID in braces', '{0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b}'],
      ['a UUID with surrounding spaces', ' 0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b '],
      ['a UUID with a non-hex digit', '0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7g'],
      ['a UUID one digit short', '0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7'],
      ['version 0', '0190a5b2-7c3d-0e4f-8a1b-2c3d4e5f6a7b'],
      ['a non-RFC variant', '0190a5b2-7c3d-7e4f-ca1b-2c3d4e5f6a7b'],
      ['the nil UUID', '00000000-0000-0000-0000-000000000000'],
    ])('rejects %s', (_, value) => {
      expect(isMessageId(value)).toBe(false);
    });

    it.each([
      ['undefined', undefined],
      ['null', null],
      ['a number', 42],
      ['an object', { id: '0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b' }],
      ['a Buffer', Buffer.from('0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b')],
      ['an array', ['0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b']],
    ])('rejects %s', (_, value) => {
      expect(isMessageId(value)).toBe(false);
    });
  });
});
