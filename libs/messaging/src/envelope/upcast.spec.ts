import { z } from 'zod';
import { defineEvent } from './event-definition';
import { oldestVersionOf, upcastPayload, versionOf } from './upcast';

const v3 = defineEvent({
  type: 'PriceChanged',
  destination: 'prices',
  version: 3,
  schema: z.object({ sku: z.string(), cents: z.number().int(), currency: z.string() }),
  key: (e) => e.sku,
  upcasters: {
    1: (v1: { sku: string; price: number }) => ({ sku: v1.sku, cents: Math.round(v1.price * 100) }),
    2: (v2: { sku: string; cents: number }) => ({ ...v2, currency: 'EUR' }),
  },
});

describe('upcast', () => {
  describe(upcastPayload.name, () => {
    it("takes a payload through each upcaster in turn, from its version to the definition's", () => {
      expect(upcastPayload(v3, { sku: 'a', price: 1.5 }, 1)).toEqual({
        ok: true,
        payload: { sku: 'a', cents: 150, currency: 'EUR' },
      });
      expect(upcastPayload(v3, { sku: 'a', cents: 7 }, 2)).toEqual({
        ok: true,
        payload: { sku: 'a', cents: 7, currency: 'EUR' },
      });
    });

    it("passes a payload of the definition's own version through unchanged", () => {
      const payload = { sku: 'a', cents: 1, currency: 'USD' };
      expect(upcastPayload(v3, payload, 3)).toEqual({ ok: true, payload });
    });

    it('says VERSION_TOO_NEW for a newer version and VERSION_TOO_OLD below the oldest upcaster', () => {
      expect(upcastPayload(v3, {}, 4)).toEqual({ ok: false, problem: 'VERSION_TOO_NEW' });
      const v2Only = defineEvent({ ...v3, version: 3, upcasters: { 2: v3.upcasters?.[2] as never } });
      expect(upcastPayload(v2Only, {}, 1)).toEqual({ ok: false, problem: 'VERSION_TOO_OLD' });
      const noUpcasters = defineEvent({ ...v3, upcasters: undefined });
      expect(upcastPayload(noUpcasters, {}, 2)).toEqual({ ok: false, problem: 'VERSION_TOO_OLD' });
    });

    it('says UPCAST_FAILED with the step and the error when an upcaster throws', () => {
      const boom = new TypeError("Cannot read properties of undefined (reading 'toFixed')");
      const throwing = defineEvent({
        ...v3,
        upcasters: {
          1: () => {
            throw boom;
          },
          2: (v2: object) => v2,
        },
      });
      expect(upcastPayload(throwing, {}, 1)).toEqual({
        ok: false,
        problem: 'UPCAST_FAILED',
        from: 1,
        error: boom,
      });
    });

    it('says UPCAST_FAILED for an upcaster that returns a promise (upcasters are synchronous)', async () => {
      const rejected = Promise.reject(new Error('later'));
      const asynchronous = defineEvent({ ...v3, version: 2, upcasters: { 1: () => rejected } });
      const result = upcastPayload(asynchronous, {}, 1);
      expect(result).toMatchObject({ ok: false, problem: 'UPCAST_FAILED', from: 1 });
      await new Promise((resolve) => setImmediate(resolve)); // its rejection was handled: no unhandled rejection
    });
  });

  describe(oldestVersionOf.name, () => {
    it('is the lowest upcaster, else the version itself', () => {
      expect(oldestVersionOf(v3)).toBe(1);
      expect(versionOf(v3)).toBe(3);
      expect(oldestVersionOf(defineEvent({ ...v3, upcasters: undefined }))).toBe(3);
      expect(oldestVersionOf({})).toBe(1);
    });
  });
});
