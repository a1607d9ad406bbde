import { TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { MessagingTenants, OutboxService } from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { createTestDatabase, TestDatabase } from '../../harness/test-database';
import {
  closeTenantsSuite,
  createTenantsApp,
  noteWritten,
  NoteWritten,
  tenantDataSource,
  TenantsBroker,
} from './tenants.fixture';

const BACKLOG = 3_000;

/**
 * Issue 43: one relay drains every tenant fairly. A tenant with a backlog of thousands of rows does not delay a
 * tenant with one: each tenant database has its relay, and they claim in turns (a batch each), so the small
 * tenant's message is published while the big one's backlog is still being drained.
 */
describe('Tenants: fair draining (RabbitMQ)', () => {
  const broker = new TenantsBroker('rabbitmq');
  const databases: TestDatabase[] = [];
  const dataSources: DataSource[] = [];
  let app: TestingModule;

  afterAll(() => closeTenantsSuite({ app, dataSources, databases, broker }), 60_000);

  it("publishes a one-row tenant's message while another tenant's backlog drains", async () => {
    const home = await createTestDatabase('postgres', 'tf_home');
    const big = await createTestDatabase('postgres', 'tf_big');
    const small = await createTestDatabase('mariadb', 'tf_small');
    databases.push(home, big, small);
    // The consumer group declares the exchange (and applies the notes in each tenant's database).
    const { destination, group } = broker.destination('tenant_fair');
    const event: NoteWritten = noteWritten(destination);
    ({ moduleRef: app } = await createTenantsApp({ home, transport: broker.transport(), event, group }));
    const tenants = app.get(MessagingTenants);
    const outbox = app.get(OutboxService);
    const bigSource = await tenantDataSource(big);
    const smallSource = await tenantDataSource(small);
    dataSources.push(bigSource, smallSource);
    await tenants.add('big', bigSource);
    await tenants.add('small', smallSource);

    // The big tenant's backlog, in one commit: its relay starts draining it at once.
    await tenants.run('big', () =>
      tenants.transactionHost().run(async () => {
        for (let i = 0; i < BACKLOG; i++) await outbox.add(event, { text: `big-${i}`, tenant: 'big' });
      }),
    );
    const written = Date.now();
    await tenants.run('small', () =>
      tenants.transactionHost().run(() => outbox.add(event, { text: 'small-0', tenant: 'small' })),
    );
    // The small tenant's row is published (its outbox empties) while the big one still has rows pending.
    const bigPendingThen = await eventually(
      async () => {
        const status = await tenants.status();
        const of = (name: string) => status.find((s) => s.tenant === name)!;
        expect(of('small').pending).toBe(0);
        return of('big').pending;
      },
      30_000,
      5,
    );
    const smallAfterMs = Date.now() - written;
    const drained = await eventually(
      async () => {
        const status = await tenants.status();
        expect(status.find((s) => s.tenant === 'big')!.pending).toBe(0);
        return Date.now() - written;
      },
      120_000,
      50,
    );
    console.log(
      `[fairness] small tenant published after ${smallAfterMs} ms with ${bigPendingThen} of ${BACKLOG} big-tenant ` +
        `rows still pending; the big backlog drained after ${drained} ms`,
    );
    expect(bigPendingThen).toBeGreaterThan(0);
    expect(smallAfterMs).toBeLessThan(drained);
  }, 180_000);
});
