import { DataSource } from 'typeorm';
import { FakeClock } from '../common/fake-clock';
import { encodeEnvelope } from '../envelope/envelope-codec';
import { MessageHeaders } from '../envelope/message-headers';
import { newMessageId } from '../envelope/message-id';
import { InvalidTenantError } from '../errors/invalid-tenant.error';
import { TenantRequiredError } from '../errors/tenant-required.error';
import { UnknownTenantError } from '../errors/unknown-tenant.error';
import { InboxWriters } from '../inbox/inbox-writers';
import { MessageTracing } from '../observability/message-tracing';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { resolveMessagingOptions } from '../options/resolve-messaging-options';
import { MessageTransport } from '../transports/message-transport.interface';
import { MessagingTenants } from './messaging-tenants';
import { stampTenant, tenantSigningKey } from '../envelope/tenant-signature';

const SECRET = Buffer.alloc(32, 3).toString('base64');

function tenantsWith(on: boolean): { tenants: MessagingTenants; refused: jest.Mock } {
  const options = resolveMessagingOptions({
    serviceName: 'svc',
    transport: { kind: 'rabbitmq', url: 'amqp://localhost' },
    ...(on ? { tenants: { signingSecret: SECRET } } : {}),
  });
  const refused = jest.fn();
  const metrics = { onScrape: jest.fn(), tenantRefused: { inc: refused } } as unknown as MessagingMetrics;
  const tenants = new MessagingTenants(
    options,
    new FakeClock(),
    {} as MessageTransport,
    metrics,
    {} as MessageTracing,
    {} as InboxWriters,
  );
  return { tenants, refused };
}

function wire() {
  return encodeEnvelope(
    {
      messageId: newMessageId(),
      type: 'T',
      destination: 'd',
      key: 'k',
      occurredAt: new Date(0),
      headers: {},
    },
    '{}',
  );
}

describe(MessagingTenants.name, () => {
  describe('add', () => {
    it('refuses when tenants are off, a bad name, or a DataSource not initialized', async () => {
      const off = tenantsWith(false).tenants;
      const dataSource = { isInitialized: false, options: { type: 'postgres' } } as unknown as DataSource;
      await expect(off.add('acme', dataSource)).rejects.toBeInstanceOf(InvalidTenantError);
      const { tenants } = tenantsWith(true);
      await expect(tenants.add('', dataSource)).rejects.toBeInstanceOf(InvalidTenantError);
      await expect(tenants.add('a b', dataSource)).rejects.toBeInstanceOf(InvalidTenantError);
      await expect(tenants.add('x'.repeat(64), dataSource)).rejects.toBeInstanceOf(InvalidTenantError);
      await expect(tenants.add('acme', dataSource)).rejects.toThrow(/not initialized/);
      expect(tenants.names()).toEqual([]);
    });
  });

  describe('run', () => {
    it('makes the tenant current inside, and only there', async () => {
      const { tenants } = tenantsWith(true);
      expect(tenants.current()).toBeUndefined();
      await tenants.run('acme', async () => {
        await Promise.resolve();
        expect(tenants.current()).toBe('acme');
        tenants.run('globex', () => expect(tenants.current()).toBe('globex'));
        expect(tenants.current()).toBe('acme');
      });
      expect(tenants.current()).toBeUndefined();
    });
  });

  describe('outbox', () => {
    it('refuses with no tenant in context (TenantRequiredError), never a default database', () => {
      const { tenants } = tenantsWith(true);
      expect(() => tenants.outbox('OutboxService.add(T)')).toThrow(TenantRequiredError);
      expect(() => tenants.transactions('@Outbox() S.m')).toThrow(TenantRequiredError);
    });

    it('refuses a tenant not registered (UnknownTenantError)', () => {
      const { tenants } = tenantsWith(true);
      expect(() => tenants.run('hooli', () => tenants.outbox('OutboxService.add(T)'))).toThrow(
        UnknownTenantError,
      );
      expect(() => tenants.dataSource('hooli')).toThrow(UnknownTenantError);
    });
  });

  describe('admit', () => {
    it('is off without the tenants option', () => {
      expect(tenantsWith(false).tenants.admit('g', wire())).toEqual({ kind: 'off' });
    });

    it('refuses a message with no tenant, or a forged one, and holds an unknown one, counting each', () => {
      const { tenants, refused } = tenantsWith(true);
      const key = tenantSigningKey(SECRET)!;
      expect(tenants.admit('g', wire())).toEqual({ kind: 'missing' });
      const forged = { ...wire(), headers: { ...wire().headers, [MessageHeaders.TENANT]: 'acme' } };
      expect(tenants.admit('g', forged)).toEqual({ kind: 'forged' });
      expect(tenants.admit('g', stampTenant(key, 'hooli', wire()))).toEqual({ kind: 'unknown' });
      expect(refused.mock.calls).toEqual([
        [{ group: 'g', reason: 'missing' }],
        [{ group: 'g', reason: 'forged' }],
        [{ group: 'g', reason: 'unknown' }],
      ]);
    });
  });
});
