import { deadLetterSplits, destinationNames } from './destination-names';

describe('destination-names', () => {
  describe('destinationNames', () => {
    describe('workQueue', () => {
      it('is <destination>.<group>', () => {
        expect(destinationNames.workQueue('post-create', 'subscribe-service')).toBe(
          'post-create.subscribe-service',
        );
      });
    });

    describe('deadLetter', () => {
      it('is <destination>.<group>.dlq', () => {
        expect(destinationNames.deadLetter('post-create', 'subscribe-service')).toBe(
          'post-create.subscribe-service.dlq',
        );
      });
    });

    describe('retry', () => {
      it('is <destination>.<group>.retry.<tier>ms', () => {
        expect(destinationNames.retry('post-create', 'subscribe-service', 2000)).toBe(
          'post-create.subscribe-service.retry.2000ms',
        );
      });

      it('gives each delay tier its own name', () => {
        const tiers = [1000, 2000, 4000, 30000].map((tier) => destinationNames.retry('d', 'g', tier));
        expect(tiers).toEqual([
          'd.g.retry.1000ms',
          'd.g.retry.2000ms',
          'd.g.retry.4000ms',
          'd.g.retry.30000ms',
        ]);
      });
    });

    describe('failureExchange', () => {
      it('is <destination>.<group>.failures', () => {
        expect(destinationNames.failureExchange('post-create', 'subscribe-service')).toBe(
          'post-create.subscribe-service.failures',
        );
      });
    });

    it('gives one group distinct work, dead-letter and retry names', () => {
      const names = [
        destinationNames.workQueue('d', 'g'),
        destinationNames.deadLetter('d', 'g'),
        destinationNames.retry('d', 'g', 1000),
      ];
      expect(new Set(names).size).toBe(3);
    });

    it('gives two groups of one destination distinct names', () => {
      expect(destinationNames.deadLetter('d', 'a')).not.toBe(destinationNames.deadLetter('d', 'b'));
      expect(destinationNames.retry('d', 'a', 1000)).not.toBe(destinationNames.retry('d', 'b', 1000));
    });
  });

  describe('deadLetterSplits', () => {
    it('reads a dead-letter name back as destination and group, every way it can be read', () => {
      expect(deadLetterSplits('orders.billing.dlq')).toEqual([{ destination: 'orders', group: 'billing' }]);
      expect(deadLetterSplits('shop.orders.billing.dlq')).toEqual([
        { destination: 'shop', group: 'orders.billing' },
        { destination: 'shop.orders', group: 'billing' },
      ]);
      for (const name of ['orders.billing', 'orders.dlq', '.billing.dlq', 'orders..dlq', 'dlq']) {
        expect(deadLetterSplits(name)).toEqual([]);
      }
    });

    it('is the inverse of destinationNames.deadLetter', () => {
      const splits = deadLetterSplits(destinationNames.deadLetter('a.b', 'c.d'));
      expect(splits).toContainEqual({ destination: 'a.b', group: 'c.d' });
      for (const s of splits) expect(destinationNames.deadLetter(s.destination, s.group)).toBe('a.b.c.d.dlq');
    });
  });
});
