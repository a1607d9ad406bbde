import { Logger } from '@nestjs/common';
import { z } from 'zod';
import { defineEvent } from '../envelope/event-definition';
import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { RetryLaterError } from '../errors/retry-later.error';
import { RetryMode, RetryOrdering, RetryPolicyOptions } from '../retry/retry-policy.interface';
import { DeliveryPipeline } from './delivery-pipeline';
import { useQuietWarnings } from '../../spec-support/quiet-warnings';
import {
  DESTINATION,
  GROUP,
  Harness,
  HarnessOptions,
  idOf,
  KAFKA,
  orderWire,
  RABBITMQ,
} from '../../spec-support/pipeline-harness';

const ACK = { kind: 'ACK' };
const LEAVE = { kind: 'LEAVE' };
const DLQ = `${DESTINATION}.${GROUP}.dlq`;
const FAST = { initialDelayMs: 1_000, multiplier: 2, maxDelayMs: 8_000 };
/** Holds: 1 s doubling to 8 s, for 60 s. */
const HOLD = { windowMs: 60_000, initialDelayMs: 1_000, maxDelayMs: 8_000 };

const schemaV2 = z.object({ orderId: z.number().int(), customer: z.string(), currency: z.string() });
/** OrderPlaced at version 2: a currency added, v1 payloads upcast with EUR. */
const OrderPlacedV2 = defineEvent({
  type: 'OrderPlaced',
  destination: DESTINATION,
  version: 2,
  schema: schemaV2,
  key: (order) => order.customer,
  upcasters: { 1: (v1: { orderId: number; customer: string }) => ({ ...v1, currency: 'EUR' }) },
});

/** A message of OrderPlaced at `version` (no header for 1). */
function versioned(version: number, payload: object = { orderId: 1, customer: 'c1' }): WireMessage {
  return orderWire(payload, version === 1 ? {} : { [MessageHeaders.EVENT_VERSION]: String(version) });
}

function harnessWith(
  options: HarnessOptions & { hold?: Partial<typeof HOLD> & { holdSchemaMismatches?: boolean } },
) {
  const { hold, consumers, ...rest } = options;
  return new Harness({ ...rest, consumers: { ...consumers, versionHold: { ...HOLD, ...hold } } });
}

async function metricLine(harness: Harness, name: string, labels: string): Promise<string | undefined> {
  const text = await harness.metrics.metrics();
  return text.split('\n').find((line) => line.startsWith(`${name}{`) && line.includes(labels));
}

describe(`${DeliveryPipeline.name} over deploys`, () => {
  useQuietWarnings();

  describe('a type the group has no handler for', () => {
    const shipped = () => orderWire({ orderId: 1, customer: 'c1' }, {}, DESTINATION, 'OrderShipped');

    it('is settled unhandled by default: acked, never dead-lettered, counted per type, logged once', async () => {
      const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
      const harness = new Harness();
      await expect(harness.handle(shipped())).resolves.toEqual(ACK);
      await expect(harness.handle(shipped())).resolves.toEqual(ACK);
      expect(harness.copies).toEqual([]);
      expect(harness.calls).toEqual([]);
      expect(await metricLine(harness, 'messaging_consumer_unhandled_total', 'type="OrderShipped"')).toMatch(
        / 2$/,
      );
      expect(await metricLine(harness, 'messaging_consumer_messages_total', 'outcome="unhandled"')).toMatch(
        / 2$/,
      );
      const lines = log.mock.calls.map(([line]) => String(line)).filter((l) => l.includes('no handler for'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`Consumer group ${GROUP} has no handler for OrderShipped on ${DESTINATION}`);
    });

    it('is settled inside a batch without breaking it: the handled ones around it share one transaction', async () => {
      const harness = new Harness();
      const [first, second] = [orderWire(), orderWire()];
      await expect(harness.handleBatch([first, shipped(), second])).resolves.toEqual([ACK, ACK, ACK]);
      expect(harness.inbox.batches).toEqual([[idOf(first), idOf(second)]]);
    });

    it("is dead-lettered as UNKNOWN_TYPE with unhandledTypes: 'dead-letter', or for the groups named", async () => {
      for (const consumers of [
        { unhandledTypes: 'dead-letter' as const },
        { unhandledTypesByGroup: { [GROUP]: 'dead-letter' as const } },
      ]) {
        const harness = new Harness({ consumers });
        await expect(harness.handle(shipped())).resolves.toEqual(ACK);
        expect(harness.copies.map((c) => c.destination)).toEqual([DLQ]);
        expect(harness.copies[0].headers[MessageHeaders.FAILURE_CODE]).toBe('UNKNOWN_TYPE');
      }
      const others = new Harness({
        consumers: {
          unhandledTypes: 'dead-letter',
          unhandledTypesByGroup: { [GROUP]: 'settle' as const, constructor: 'dead-letter' as const },
        },
      });
      await expect(others.handle(shipped())).resolves.toEqual(ACK);
      expect(others.copies).toEqual([]);
    });

    it('keeps the label set bounded: 50 types by name, then (other); a name that is no type name is (invalid)', async () => {
      const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
      const harness = new Harness();
      for (let i = 0; i < 70; i++) {
        await harness.handle(orderWire({}, {}, DESTINATION, `Type${i}`));
      }
      await harness.handle(orderWire({}, {}, DESTINATION, 'x\u001b[2Jy'));
      const text = await harness.metrics.metrics();
      const labels = text.split('\n').filter((l) => l.startsWith('messaging_consumer_unhandled_total{'));
      expect(labels).toHaveLength(52);
      expect(labels.find((l) => l.includes('type="(other)"'))).toMatch(/ 20$/);
      expect(labels.find((l) => l.includes('type="(invalid)"'))).toMatch(/ 1$/);
      expect(log.mock.calls.filter(([line]) => String(line).includes('no handler for'))).toHaveLength(50);
    });
  });

  describe('event versions', () => {
    it('takes an older version through the upcasters: the handler gets the current shape and the version it came in', async () => {
      const harness = new Harness({ event: OrderPlacedV2 });
      await expect(harness.handle(versioned(1))).resolves.toEqual(ACK);
      await expect(
        harness.handle(versioned(2, { orderId: 2, customer: 'c1', currency: 'USD' })),
      ).resolves.toEqual(ACK);
      expect(harness.payloads).toEqual([
        { orderId: 1, customer: 'c1', currency: 'EUR' },
        { orderId: 2, customer: 'c1', currency: 'USD' },
      ]);
      expect(harness.calls.map((c) => c.eventVersion)).toEqual([1, 2]);
    });

    it('Kafka: holds a newer version by pausing the partition, redelivery after redelivery, then dead-letters it after the window', async () => {
      const warn = jest.mocked(Logger.prototype.warn);
      const harness = harnessWith({ capabilities: KAFKA });
      const v3 = versioned(3);
      await expect(harness.handle(v3)).resolves.toEqual({ kind: 'PAUSE', delayMs: 500 });
      expect(harness.held.heldNow()).toMatchObject({ count: 1, oldestHeldMs: 0 });
      await harness.clock.advance(500);
      await expect(harness.handle(v3)).resolves.toEqual({ kind: 'PAUSE', delayMs: 1_000 });
      expect(warn.mock.calls.filter(([l]) => String(l).includes('VERSION_TOO_NEW'))).toHaveLength(1); // once
      expect(String(warn.mock.calls.find(([l]) => String(l).includes('VERSION_TOO_NEW'))?.[0])).toContain(
        'version 3; this consumer takes OrderPlaced versions 1 to 1',
      );
      expect(harness.copies).toEqual([]);
      expect(await metricLine(harness, 'messaging_consumer_holds_total', 'reason="version"')).toMatch(/ 2$/);
      expect(await metricLine(harness, 'messaging_consumer_held_messages', 'reason="version"')).toMatch(
        / 1$/,
      );

      await harness.clock.advance(HOLD.windowMs);
      await expect(harness.handle(v3)).resolves.toEqual(ACK);
      expect(harness.copies.map((c) => c.destination)).toEqual([DLQ]);
      expect(harness.copies[0].headers).toMatchObject({
        [MessageHeaders.FAILURE_CATEGORY]: 'VALIDATION',
        [MessageHeaders.FAILURE_CODE]: 'VERSION_TOO_NEW',
        [MessageHeaders.EVENT_VERSION]: '3',
      });
      expect(harness.held.heldNow().count).toBe(0);
      expect(harness.calls).toEqual([]);
    });

    it('RabbitMQ: holds a newer version in the consumer, looking again after each wait, then dead-letters it after the window', async () => {
      const harness = harnessWith({ capabilities: RABBITMQ });
      const settled = harness.handle(versioned(3));
      await harness.clock.advance(30_000);
      expect(harness.held.heldNow()).toMatchObject({ count: 1, oldestHeldMs: 30_000 });
      expect(harness.copies).toEqual([]);
      await expect(harness.withTimePassing(settled, 1_000)).resolves.toEqual(ACK);
      expect(harness.clock.now() - Date.parse('2026-12-01T00:00:00Z')).toBeGreaterThanOrEqual(HOLD.windowMs);
      expect(harness.copies.map((c) => c.headers[MessageHeaders.FAILURE_CODE])).toEqual(['VERSION_TOO_NEW']);
      expect(
        Number(
          (await metricLine(harness, 'messaging_consumer_holds_total', 'reason="version"'))?.split(' ')[1],
        ),
      ).toBeGreaterThan(3);
    });

    it('RabbitMQ: leaves a held message unsettled when the consumer stops (the broker gives it to another instance)', async () => {
      const harness = harnessWith({ capabilities: RABBITMQ });
      const settled = harness.handle(versioned(3));
      await harness.clock.advance(5_000);
      harness.stopping = true;
      await expect(harness.withTimePassing(settled)).resolves.toEqual(LEAVE);
      expect(harness.copies).toEqual([]);
    });

    it('holds a version older than the upcasters reach (VERSION_TOO_OLD)', async () => {
      const v2Only = defineEvent({ ...OrderPlacedV2, upcasters: undefined });
      const harness = harnessWith({ event: v2Only, capabilities: KAFKA });
      const v1 = versioned(1);
      await expect(harness.handle(v1)).resolves.toMatchObject({ kind: 'PAUSE' });
      await harness.clock.advance(HOLD.windowMs);
      await expect(harness.handle(v1)).resolves.toEqual(ACK);
      expect(harness.copies.map((c) => c.headers[MessageHeaders.FAILURE_CODE])).toEqual(['VERSION_TOO_OLD']);
    });

    it('holds a message an upcaster throws on as UPCAST, and dead-letters it at the end even under REJECT (never dropped)', async () => {
      const throwing = defineEvent({
        ...OrderPlacedV2,
        upcasters: {
          1: () => {
            throw new TypeError('currency table missing');
          },
        },
      });
      const policy: RetryPolicyOptions = { maxAttempts: 3, mode: RetryMode.INLINE, onNonRetryable: 'REJECT' };
      const harness = harnessWith({ event: throwing, capabilities: KAFKA, policy });
      const v1 = versioned(1);
      await expect(harness.handle(v1)).resolves.toMatchObject({ kind: 'PAUSE' });
      expect(await metricLine(harness, 'messaging_consumer_holds_total', 'reason="upcast"')).toMatch(/ 1$/);
      await harness.clock.advance(HOLD.windowMs);
      await expect(harness.handle(v1)).resolves.toEqual(ACK);
      expect(harness.copies[0].headers).toMatchObject({
        [MessageHeaders.FAILURE_CATEGORY]: 'UPCAST',
        [MessageHeaders.FAILURE_CODE]: 'UPCAST_FAILED',
      });
      expect(harness.copies[0].body.toString()).not.toContain('currency table missing');
    });

    it('holds a message whose upcast payload the schema refuses as UPCAST/UPCAST_INVALID', async () => {
      const wrong = defineEvent({
        ...OrderPlacedV2,
        upcasters: { 1: (v1: object) => ({ ...v1, currency: 7 }) },
      });
      const harness = harnessWith({ event: wrong, capabilities: KAFKA, hold: { windowMs: 0 } });
      await expect(harness.handle(versioned(1))).resolves.toEqual(ACK);
      expect(harness.copies[0].headers[MessageHeaders.FAILURE_CODE]).toBe('UPCAST_INVALID');
    });

    it('reads a held message again after each wait, and handles it once it can (RabbitMQ)', async () => {
      const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
      let fail = 2;
      const flaky = defineEvent({
        ...OrderPlacedV2,
        upcasters: {
          1: (v1: object) => {
            if (fail-- > 0) throw new Error('not yet');
            return { ...v1, currency: 'EUR' };
          },
        },
      });
      const harness = harnessWith({ event: flaky, capabilities: RABBITMQ });
      await expect(harness.withTimePassing(harness.handle(versioned(1)))).resolves.toEqual(ACK);
      expect(harness.calls).toHaveLength(1);
      expect(harness.copies).toEqual([]);
      expect(harness.held.heldNow().count).toBe(0);
      expect(log.mock.calls.some(([line]) => String(line).includes('is no longer held'))).toBe(true);
    });

    it('dead-letters a payload the schema refuses at its own version at once; holds it with holdSchemaMismatches', async () => {
      const bad = orderWire({ orderId: 'one', customer: 'c1' });
      const atOnce = harnessWith({ capabilities: KAFKA });
      await expect(atOnce.handle(bad)).resolves.toEqual(ACK);
      expect(atOnce.copies.map((c) => c.headers[MessageHeaders.FAILURE_CODE])).toEqual(['SCHEMA_MISMATCH']);
      const holding = harnessWith({ capabilities: KAFKA, hold: { holdSchemaMismatches: true } });
      await expect(holding.handle(bad)).resolves.toMatchObject({ kind: 'PAUSE' });
      expect(await metricLine(holding, 'messaging_consumer_holds_total', 'reason="schema"')).toMatch(/ 1$/);
    });

    it('in a batch, settles what comes before a held message and leaves what comes after (Kafka)', async () => {
      const harness = harnessWith({ capabilities: KAFKA });
      const settled = await harness.handleBatch([versioned(1), versioned(3), versioned(1)]);
      expect(settled).toEqual([ACK, { kind: 'PAUSE', delayMs: 500 }, LEAVE]);
      expect(harness.calls).toHaveLength(1);
    });
  });

  describe("a handler's own retry delay", () => {
    const failing = (error: () => Error, options: HarnessOptions) =>
      new Harness({ ...options, failWhile: () => true, error });

    it('Kafka PAUSE_PARTITION: pauses for the delay asked (plus up to a tenth), not the backoff', async () => {
      const policy = { maxAttempts: 5, mode: RetryMode.PAUSE_PARTITION, backoff: FAST };
      const harness = failing(() => new RetryLaterError(3_000), { policy });
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'PAUSE', delayMs: 3_150 });
    });

    it("caps the delay at the policy's longest (its last retry's base delay)", async () => {
      const policy = { maxAttempts: 5, mode: RetryMode.PAUSE_PARTITION, backoff: FAST };
      const harness = failing(() => new RetryLaterError(600_000), { policy });
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'PAUSE', delayMs: 8_000 });
    });

    it("reads an HTTP client's 429 with Retry-After", async () => {
      const policy = { maxAttempts: 5, mode: RetryMode.PAUSE_PARTITION, backoff: FAST };
      const tooMany = () =>
        Object.assign(new Error('Request failed with status code 429'), {
          name: 'AxiosError',
          response: { status: 429, headers: { 'retry-after': '2' } },
        });
      const harness = failing(tooMany, { policy });
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'PAUSE', delayMs: 2_100 });
    });

    it('Kafka RETRY_DESTINATION: a retry topic whose tier holds the delay, due at now + delay', async () => {
      const policy = {
        maxAttempts: 5,
        mode: RetryMode.RETRY_DESTINATION,
        ordering: RetryOrdering.ALLOW_REORDER,
        backoff: FAST,
      };
      const harness = failing(() => new RetryLaterError(3_000), { policy });
      await expect(harness.handle(orderWire())).resolves.toEqual(ACK);
      expect(harness.copies.map((c) => c.destination)).toEqual([`${DESTINATION}.${GROUP}.retry.4000ms`]);
      expect(Date.parse(harness.copies[0].headers[MessageHeaders.RETRY_DUE_AT])).toBe(
        harness.clock.now() + 3_150,
      );
    });

    it('RabbitMQ BROKER_DELAYED: the largest TTL tier not longer than the delay, due at now + delay', async () => {
      const policy = { maxAttempts: 5, mode: RetryMode.BROKER_DELAYED, backoff: FAST };
      const harness = failing(() => new RetryLaterError(3_000), { policy, capabilities: RABBITMQ });
      await expect(harness.handle(orderWire())).resolves.toEqual(ACK);
      expect(harness.copies.map((c) => c.destination)).toEqual([`${DESTINATION}.${GROUP}.retry.2000ms`]);
      expect(Date.parse(harness.copies[0].headers[MessageHeaders.RETRY_DUE_AT])).toBe(
        harness.clock.now() + 3_150,
      );
    });

    it('INLINE: waits the delay asked before the next try', async () => {
      // Five attempts: its longest delay is 8 s (with three it would be 2 s, and the 5 s asked capped there).
      const policy = { maxAttempts: 5, mode: RetryMode.INLINE, backoff: FAST };
      const harness = new Harness({ policy, capabilities: RABBITMQ });
      const at: number[] = [];
      harness.onCall = (context) => {
        at.push(harness.clock.now());
        if (context.attempt === 1) throw new RetryLaterError(5_000);
      };
      await expect(harness.withTimePassing(harness.handle(orderWire()), 50)).resolves.toEqual(ACK);
      expect(at[1] - at[0]).toBeGreaterThanOrEqual(5_000);
      expect(at[1] - at[0]).toBeLessThanOrEqual(5_300);
    });

    it('gives no retry without a policy, nor past maxAttempts', async () => {
      const none = failing(() => new RetryLaterError(1_000), {});
      await expect(none.handle(orderWire())).resolves.toEqual(ACK);
      expect(none.copies.map((c) => c.destination)).toEqual([DLQ]);
      const policy = { maxAttempts: 1, mode: RetryMode.PAUSE_PARTITION, backoff: FAST };
      const exhausted = failing(() => new RetryLaterError(1_000), { policy });
      await expect(exhausted.handle(orderWire())).resolves.toEqual(ACK);
      expect(exhausted.copies[0].headers[MessageHeaders.FAILURE_CODE]).toBe('RETRY_LATER');
    });

    it('retries with the backoff a handler whose RetryLaterError was refused (a negative delay)', async () => {
      const policy = { maxAttempts: 5, mode: RetryMode.PAUSE_PARTITION, backoff: FAST };
      const harness = failing(() => new RetryLaterError(-5), { policy });
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'PAUSE', delayMs: 500 });
    });
  });
});
