import { Clock } from '../common/clock';
import { decodeEnvelope } from '../envelope/envelope-codec';
import { MessageHeaders } from '../envelope/message-headers';
import { FailureCategory } from '../errors/failure-category';
import { withoutFailureHeaders } from '../failure/failure-copy';
import { InboxDelivery } from '../inbox/inbox.service';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { ResolvedRetryPolicy } from '../retry/retry-policy.interface';
import { Delivery, DeliveryControl } from '../transports/delivery-contract';
import { FailedDelivery } from './failure-settler';
import { HandlerRegistry } from './handler-registry';
import { HoldReason } from './held-messages';
import { readPayload } from './payload-reading';
import { RunState } from './run-state';
import { Failure } from './settle-decision';
import { UnhandledDelivery, unhandledTypeAction } from './unhandled-types';
import { TenantRouting } from '../transaction/tenant-routing';

/**
 * A delivery ready for its handler; one that cannot be handled (not decodable, no handler for its type and
 * `dead-letter` for those, a payload against the event's schema) with the policy that says what becomes of
 * it; one to hold (a version this consumer cannot take yet, an upcaster that failed); or one of a type the
 * group does not handle, to settle unhandled.
 */
export type Prepared =
  | { readonly ready: RunState }
  | { readonly unprocessable: FailedDelivery; readonly policy: ResolvedRetryPolicy | undefined }
  | {
      readonly held: FailedDelivery;
      readonly policy: ResolvedRetryPolicy | undefined;
      readonly reason: HoldReason;
    }
  | { readonly unhandled: UnhandledDelivery };

/**
 * Decodes the envelope (dated by `clock` when it carries no time), checks its tenant (tenants on), finds the
 * group's handler, and reads the payload at the handler's event version (`readPayload`: upcast, then
 * validated). A tenant this service has not registered is held (then dead-lettered), one without its signature
 * or with a wrong one dead-lettered at once, and so is a message with no tenant: none is ever applied in a
 * database that is not its tenant's.
 */
export function prepareDelivery(
  registry: HandlerRegistry,
  options: ResolvedMessagingOptions,
  group: string,
  delivery: Delivery,
  control: DeliveryControl,
  clock: Pick<Clock, 'now'>,
  tenants?: TenantRouting,
): Prepared {
  const decoded = decodeEnvelope(delivery.wire, clock);
  const destination = delivery.wire.destination;
  const defaultPolicy = options.retryDefaults.get(destination);
  const failed = (failure: Failure): FailedDelivery => ({
    group,
    delivery,
    control,
    failure,
    attempt: firstAttempt(delivery),
  });
  if (!decoded.ok) return { unprocessable: failed(decoded.failure), policy: defaultPolicy };
  const envelope = decoded.envelope;
  const admission = tenants?.admit(group, delivery.wire) ?? { kind: 'off' };
  if (admission.kind === 'unknown') {
    const failure = {
      category: FailureCategory.CONFIGURATION,
      code: 'UNKNOWN_TENANT',
      messageId: envelope.messageId,
    };
    return { held: failed(failure), policy: defaultPolicy, reason: 'tenant' };
  }
  if (admission.kind === 'forged' || admission.kind === 'missing') {
    const code = admission.kind === 'forged' ? 'TENANT_SIGNATURE_INVALID' : 'TENANT_MISSING';
    const failure = { category: FailureCategory.AUTHORIZATION, code, messageId: envelope.messageId };
    return { unprocessable: failed(failure), policy: defaultPolicy };
  }
  const handler = registry.find(group, destination, envelope.type);
  if (!handler) {
    if (unhandledTypeAction(options, group) === 'settle') {
      return { unhandled: { group, destination, type: envelope.type, messageId: envelope.messageId } };
    }
    const failure = {
      category: FailureCategory.VALIDATION,
      code: 'UNKNOWN_TYPE',
      messageId: envelope.messageId,
    };
    return { unprocessable: failed(failure), policy: defaultPolicy };
  }
  const read = readPayload(handler, envelope, options.consumers.versionHold.holdSchemaMismatches);
  if ('failure' in read) {
    const policy = handler.policy;
    return read.hold
      ? { held: failed(read.failure), policy, reason: read.hold }
      : { unprocessable: failed(read.failure), policy };
  }
  const inboxDelivery: InboxDelivery = {
    group,
    envelope,
    body: delivery.wire.body,
    redriveId: delivery.wire.headers[MessageHeaders.REDRIVE_ID] ?? '',
    tenant: admission.kind === 'tenant' ? admission.tenant : undefined,
  };
  return {
    ready: {
      group,
      delivery,
      control,
      envelope,
      handler,
      payload: read.payload,
      inboxDelivery,
      attempt: firstAttempt(delivery),
      failedInPlace: false,
      commitLost: false,
      connectionLosses: 0,
      tryCallbacks: [],
      unconfirmed: [],
      labels: { group, destination: envelope.destination },
    },
  };
}

/**
 * The delivery with the failure headers (attempt, first failure, due time) only where the library wrote
 * them: a message read from the destination itself has none, whatever its producer set.
 */
export function trustedDelivery(delivery: Delivery): Delivery {
  if (delivery.origin.retryTierMs !== undefined) return delivery;
  return { ...delivery, wire: { ...delivery.wire, headers: withoutFailureHeaders(delivery.wire.headers) } };
}

/**
 * How long a message back from a retry destination is still not due (RabbitMQ: a TTL tier shorter than
 * its delay; the rest is waited in a smaller tier, or here). Never as long as the tier it came from, so
 * every hop is shorter than the last and a due time far in the future cannot hold it.
 */
export function notDueFor(delivery: Delivery, now: number): number {
  const tierMs = delivery.origin.retryTierMs;
  const dueAt = Date.parse(delivery.wire.headers[MessageHeaders.RETRY_DUE_AT] ?? '');
  if (tierMs === undefined || !(dueAt > now)) return 0;
  return Math.min(dueAt - now, tierMs - 1);
}

/** The number of this delivery as far as the message says: one more than `msg.retry-attempt`, or 1. */
function firstAttempt(delivery: Delivery): number {
  const failed = Number.parseInt(delivery.wire.headers[MessageHeaders.RETRY_ATTEMPT] ?? '0', 10);
  return (Number.isFinite(failed) && failed > 0 ? failed : 0) + 1;
}
