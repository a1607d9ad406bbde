import { Injectable } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { Outbox, OutboxService, TransactionAbortedError, TransactionHost } from 'nest-reliable-messaging';
import { uniqueName } from '../../harness/names';
import { createTestDatabase, EACH_DATABASE, TestDatabase } from '../../harness/test-database';
import { DeadlockBallast, DeadlockRow, InnodbDeadlock, isDeadlock } from '../support/innodb-deadlock';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { Order, OrderEventHolder, orderPlaced } from '../support/orders.fixture';
import { TakenKey } from '../support/swallowing-consumer.fixture';

/** The statement each case makes fail inside the transaction; the key names its rows. */
class FailingStatements {
  constructor(
    /** Fails in a way that ends the transaction (PostgreSQL: any error; MariaDB: a deadlock, ours the victim). */
    readonly ending: (manager: EntityManager, key: string) => Promise<void>,
    /** A unique violation: the key is taken. */
    readonly duplicate: (manager: EntityManager, key: string) => Promise<void>,
  ) {}
}

/** Orders written with an event, each method catching a database error and going on. */
@Injectable()
class SwallowingOrders {
  readonly swallowed: unknown[] = [];

  constructor(
    @InjectRepository(Order) private readonly orders: Repository<Order>,
    private readonly outbox: OutboxService,
    private readonly event: OrderEventHolder,
    private readonly transactions: TransactionHost,
    private readonly failing: FailingStatements,
  ) {}

  /** Writes the order and its event, then swallows an error that ended the transaction. */
  @Outbox()
  async writeThenSwallow(customer: string): Promise<void> {
    await this.write(customer);
    await this.swallow(() => this.failing.ending(this.transactions.manager, customer));
  }

  /** Swallows an error that ended the transaction, then writes the order and its event. */
  @Outbox()
  async swallowThenWrite(customer: string): Promise<void> {
    await this.swallow(() => this.failing.ending(this.transactions.manager, customer));
    await this.write(customer);
  }

  /** Writes, then swallows a unique violation inside a savepoint (a nested transaction): that is fine. */
  @Outbox()
  async swallowInSavepoint(customer: string): Promise<void> {
    await this.write(customer);
    await this.swallow(() =>
      this.transactions.manager.transaction((m) => this.failing.duplicate(m, customer)),
    );
  }

  private async write(customer: string): Promise<void> {
    const order = await this.orders.save(this.orders.create({ customer, amount: 1 }));
    await this.outbox.add(this.event.event, { orderId: order.id, customer, amount: 1 });
  }

  private async swallow(statement: () => Promise<void>): Promise<void> {
    try {
      await statement();
    } catch (error) {
      this.swallowed.push(error); // "it is already there": the method believes it is done
    }
  }
}

/**
 * Issue 26, defect 1, the publishing side: an `@Outbox()` method that swallows a database error which
 * ended its transaction used to return as if its write and its event were committed, while neither was
 * (or, on MariaDB after a deadlock, the statements after it autocommitted one by one). Now it throws.
 */
describe.each(EACH_DATABASE)('@Outbox() over a swallowed database error (%s)', (_, dialect) => {
  let app: TestingModule;
  let deadlock: InnodbDeadlock | undefined;
  let schema: TestDatabase;
  const destination = uniqueName('swallowed_outbox');

  beforeAll(async () => {
    schema = await createTestDatabase(dialect, 'outbox_swallowed');
    const duplicate = async (manager: EntityManager, key: string) =>
      void (await manager.insert(TakenKey, { key }));
    const ending =
      dialect === 'postgres'
        ? duplicate
        : (manager: EntityManager, key: string) => deadlock!.provoke(manager, key);
    app = await createMessagingApp({
      schema,
      transport: rabbitTransport(),
      entities: [Order, TakenKey, DeadlockRow, DeadlockBallast],
      providers: [
        SwallowingOrders,
        { provide: OrderEventHolder, useValue: new OrderEventHolder(orderPlaced(destination)) },
        { provide: FailingStatements, useValue: new FailingStatements(ending, duplicate) },
      ],
      messaging: { relay: { enabled: false } },
    });
    if (dialect === 'mariadb') deadlock = new InnodbDeadlock(schema);
  });

  afterAll(async () => {
    await app?.close();
    await deadlock?.close();
    await schema?.drop();
  });

  /** The customer's orders and outbox rows, read with SQL. */
  async function written(customer: string): Promise<{ orders: number; events: number }> {
    const orders = await schema.query('select id from orders where customer = $1', [customer]);
    const events = await schema.query(`select id from messaging_outbox where ${schema.quote('key')} = $1`, [
      customer,
    ]);
    return { orders: orders.length, events: events.length };
  }

  /** Makes the customer's statement fail: its key taken (a unique violation), its deadlock rows there. */
  async function prepare(customer: string): Promise<void> {
    await schema.query(`insert into swallow_taken (${schema.quote('key')}) values ($1)`, [customer]);
    await deadlock?.prepare([customer]);
  }

  const swallowedName =
    dialect === 'postgres' ? /QueryFailedError\/23505/ : /QueryFailedError\/ER_LOCK_DEADLOCK/;

  // claim: C-36
  test('writes, then swallows: the call throws TransactionAbortedError; neither the row nor the event exists', async () => {
    const customer = uniqueName('write_then_swallow');
    await prepare(customer);
    const orders = app.get(SwallowingOrders);

    const outcome = await orders.writeThenSwallow(customer).then(
      () => 'returned',
      (error: unknown) => error,
    );
    expect(await written(customer)).toEqual({ orders: 0, events: 0 });
    expect(outcome).toBeInstanceOf(TransactionAbortedError);
    expect(String(outcome)).toMatch(swallowedName);
    if (dialect === 'mariadb') expect(isDeadlock(orders.swallowed.at(-1))).toBe(true);
  });

  test('swallows, then writes: the call throws TransactionAbortedError; nothing was written or autocommitted', async () => {
    const customer = uniqueName('swallow_then_write');
    await prepare(customer);

    const outcome = await app
      .get(SwallowingOrders)
      .swallowThenWrite(customer)
      .then(
        () => 'returned',
        (error: unknown) => error,
      );
    expect(await written(customer)).toEqual({ orders: 0, events: 0 });
    expect(outcome).toBeInstanceOf(TransactionAbortedError);
    expect(String(outcome)).toMatch(swallowedName);
  });

  test('a unique violation swallowed inside a savepoint: the transaction commits, row and event', async () => {
    const customer = uniqueName('savepoint');
    await prepare(customer);

    await app.get(SwallowingOrders).swallowInSavepoint(customer);
    expect(await written(customer)).toEqual({ orders: 1, events: 1 });
  });
});
