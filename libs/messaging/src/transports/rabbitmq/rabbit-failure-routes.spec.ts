import { failureRouteOf, RabbitCopyRoutes } from './rabbit-failure-routes';

describe('rabbit-failure-routes', () => {
  const group = { group: 'billing', destination: 'orders', retryTiersMs: [1000, 5000] };

  describe('failureRouteOf', () => {
    it('binds the group’s retry queues and DLQ to its failure exchange, never its work queue', () => {
      expect(failureRouteOf(group)).toEqual({
        exchange: 'orders.billing.failures',
        queues: ['orders.billing.retry.1000ms', 'orders.billing.retry.5000ms', 'orders.billing.dlq'],
      });
    });
  });

  describe(RabbitCopyRoutes.name, () => {
    describe('exchangeFor', () => {
      it('sends a copy for a queue of a group added through that group’s failure exchange', () => {
        const routes = new RabbitCopyRoutes();
        routes.add(failureRouteOf(group));
        expect(routes.exchangeFor('orders.billing.dlq')).toBe('orders.billing.failures');
        expect(routes.exchangeFor('orders.billing.retry.5000ms')).toBe('orders.billing.failures');
      });

      // An admin's redrive into a work queue, a discard into an archive, a group whose exchange is missing.
      it('sends any other copy through the default exchange', () => {
        const routes = new RabbitCopyRoutes();
        routes.add(failureRouteOf(group));
        expect(routes.exchangeFor('orders.billing')).toBe('');
        expect(routes.exchangeFor('orders.billing.dlq.archive')).toBe('');
        expect(routes.exchangeFor('orders.shipping.dlq')).toBe('');
      });
    });
  });
});
