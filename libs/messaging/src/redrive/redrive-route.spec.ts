import { MessageHeaders } from '../envelope/message-headers';
import { DeadLetterRecord } from './dead-letter-record';
import { AmbiguousRedriveRouteError } from './errors/ambiguous-redrive-route.error';
import { NotADeadLetterSourceError } from './errors/not-a-dead-letter-source.error';
import { RedriveTargetRefusedError } from './errors/redrive-target-refused.error';
import { checkRecords, deriveRoute } from './redrive-route';

const record = (origin: string | undefined, failed = true): DeadLetterRecord => ({
  position: { kind: 'queue', index: 0 },
  wire: {
    destination: 'x.dlq',
    key: null,
    body: Buffer.alloc(0),
    headers: {
      ...(origin === undefined ? {} : { [MessageHeaders.ORIGIN_DESTINATION]: origin }),
      ...(failed ? { [MessageHeaders.FAILURE_CATEGORY]: 'TRANSIENT' } : {}),
    },
  },
});

describe(deriveRoute.name, () => {
  it('derives the route from the name: Kafka the destination topic, RabbitMQ the group’s work queue', () => {
    expect(deriveRoute('kafka', 'orders.billing.dlq')).toEqual({
      origin: 'orders',
      group: 'billing',
      target: 'orders',
    });
    expect(deriveRoute('rabbitmq', 'orders.billing.dlq').target).toBe('orders.billing');
  });

  it('refuses a name that reads two ways without the topology, and takes the topology’s group with it', () => {
    expect(() => deriveRoute('kafka', 'shop.orders.billing.dlq')).toThrow(AmbiguousRedriveRouteError);
    const topology = {
      destinations: [],
      groups: [{ group: 'billing', destination: 'shop.orders', retryTiersMs: [] }],
    };
    expect(deriveRoute('kafka', 'shop.orders.billing.dlq', topology)).toEqual({
      origin: 'shop.orders',
      group: 'billing',
      target: 'shop.orders',
    });
    expect(() => deriveRoute('kafka', 'shop.other.dlq', topology)).toThrow(NotADeadLetterSourceError);
    const both = {
      destinations: [],
      groups: [...topology.groups, { group: 'orders.billing', destination: 'shop', retryTiersMs: [] }],
    };
    expect(() => deriveRoute('kafka', 'shop.orders.billing.dlq', both)).toThrow(AmbiguousRedriveRouteError);
  });

  it('refuses what is not a dead-letter destination, and a derived target that is one', () => {
    for (const source of ['orders.billing', 'orders.dlq', 'orders.billing.dlq.x']) {
      expect(() => deriveRoute('rabbitmq', source)).toThrow(NotADeadLetterSourceError);
    }
    expect(() => deriveRoute('kafka', 'x.retry.1000ms.billing.dlq')).toThrow(AmbiguousRedriveRouteError);
    expect(() => deriveRoute('kafka', '__consumer_offsets.g.dlq')).toThrow(RedriveTargetRefusedError);
  });
});

describe(checkRecords.name, () => {
  const route = deriveRoute('kafka', 'orders.billing.dlq');

  it('passes dead-letter copies that failed in the route’s destination', () => {
    expect(() =>
      checkRecords('orders.billing.dlq', route, [record('orders'), record('orders')]),
    ).not.toThrow();
  });

  it('refuses a copy naming another origin, and a message without failure headers', () => {
    expect(() => checkRecords('orders.billing.dlq', route, [record('orders'), record('payments')])).toThrow(
      RedriveTargetRefusedError,
    );
    expect(() => checkRecords('orders.billing.dlq', route, [record('orders', false)])).toThrow(
      NotADeadLetterSourceError,
    );
    expect(() => checkRecords('orders.billing.dlq', route, [record(undefined)])).toThrow(
      NotADeadLetterSourceError,
    );
  });
});
