import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Clock } from '../common/clock';
import { isRedriveForAnotherGroup } from '../failure/redrive-target-group';
import { InboxOutcome, InboxService } from '../inbox/inbox.service';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from '../messaging.constants';
import { MessageTracing } from '../observability/message-tracing';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { tierAtMost } from '../retry/backoff';
import { MessageTransport } from '../transports/message-transport.interface';
import { Delivery, DeliveryControl, Settlement } from '../transports/delivery-contract';
import { DatabaseWait } from './database-wait';
import { describeMessage, errorLine } from './delivery-description';
import { notDueFor, Prepared, prepareDelivery, trustedDelivery } from './delivery-preparation';
import { DeliveryTries } from './delivery-tries';
import { FailureSettler } from './failure-settler';
import { HandlerRegistry } from './handler-registry';
import { waitKeepingAlive } from './keep-alive-wait';
import { groupRetryTiers } from './retry-tiers';
import { continues, MAX_CONNECTION_LOSSES, ReadyDelivery, RunState, settleInOrder } from './run-state';
import { ACK, LEAVE } from './settle-decision';
import { TenantParking } from './tenant-parking';
import { UnhandledDelivery, UnhandledTypes } from './unhandled-types';
import { TenantRouting } from '../transaction/tenant-routing';

/**
 * What happens to every delivery, on every transport: decode the envelope, find the group's handler (a type
 * it has none for is settled unhandled and counted, by default), bring the payload to the handler's event
 * version and validate it, run handler and inbox record in one transaction, and say how to settle. A
 * failure at any step goes to the `FailureSettler`, the one owner of the failure path (it decides, reports, waits an
 * inline retry out, publishes any dead-letter or retry copy); the transport only applies the settlement.
 * Bad messages never stop a consumer.
 */
@Injectable()
export class DeliveryPipeline {
  private readonly logger = new Logger('MessagingConsumer');
  private readonly tries: DeliveryTries;
  private readonly database: DatabaseWait;
  private readonly unhandled: UnhandledTypes;
  private stopping = false;

  constructor(
    private readonly registry: HandlerRegistry,
    private readonly inbox: InboxService,
    private readonly failures: FailureSettler,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    private readonly metrics: MessagingMetrics,
    tracing: MessageTracing,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
    @Optional() private readonly tenants?: TenantRouting,
    @Optional() private readonly parking?: TenantParking,
  ) {
    this.tries = new DeliveryTries(inbox, tracing, transport.kind, metrics, clock, this.logger);
    this.database = new DatabaseWait(clock, this.logger);
    this.unhandled = new UnhandledTypes(metrics, this.logger);
  }

  /** From now on, deliveries waiting for an inline retry or a copy's confirm are left unsettled. */
  stop(): void {
    this.stopping = true;
    void this.parking?.pause();
  }

  resume(): void {
    this.stopping = false;
    this.parking?.resume(
      (group, deliveries, control) => this.handleBatch(group, deliveries, control),
      () => this.registry.groupNames(),
      (tenant, timeoutMs) => this.tenants?.answers(tenant, timeoutMs) ?? Promise.resolve(true),
    );
  }

  /** Handles one delivery and says how to settle it. */
  async handle(group: string, received: Delivery, transportControl: DeliveryControl): Promise<Settlement> {
    if (isRedriveForAnotherGroup(received.wire.headers, group)) return this.skipRedrive(group, received);
    const delivery = trustedDelivery(received);
    const control = this.controlOf(transportControl);
    const waitMs = notDueFor(delivery, this.clock.now());
    if (waitMs > 0) {
      const tier = tierAtMost(
        waitMs,
        groupRetryTiers(this.registry, this.options, group, delivery.wire.destination),
      );
      if (tier !== undefined) return this.failures.forward(group, delivery, control, tier);
      if (!(await waitKeepingAlive(this.clock, waitMs, control))) return LEAVE;
    }
    return this.settlePrepared(group, delivery, control, this.prepare(group, delivery, control));
  }

  /**
   * Runs a prepared delivery, or settles one that cannot run: unhandled (counted, ACK), unprocessable (the
   * failure path), or held, looked at again after each wait in the consumer until it can be read, the window
   * ends or the consumer stops (a PAUSE comes back as a new delivery).
   */
  private async settlePrepared(
    group: string,
    delivery: Delivery,
    control: DeliveryControl,
    first: Prepared,
  ): Promise<Settlement> {
    for (let prepared = first; ; prepared = this.prepare(group, delivery, control)) {
      if ('ready' in prepared) return this.run(prepared.ready);
      if ('unhandled' in prepared) return this.settleUnhandled(prepared.unhandled);
      if ('unprocessable' in prepared) {
        return this.failures.unprocessable(prepared.unprocessable, prepared.policy);
      }
      const settlement = await this.failures.hold(prepared.held, prepared.policy, prepared.reason);
      if (settlement) return settlement;
    }
  }

  private settleUnhandled(unhandled: UnhandledDelivery): Settlement {
    this.unhandled.count(unhandled);
    return ACK;
  }

  /**
   * Handles deliveries of one lane (no two of them may run side by side: one key's messages, or several
   * keys that share a lane), in order, and says how to settle each, in the same order. Consecutive
   * deliveries ready for their handler, up to `consumers.batchSize` distinct messages, share one transaction
   * (`InboxBatch`): their inbox records in one statement, then each handler, then one commit. A handler
   * that throws (or swallows a database error that ended the transaction) spoils the transaction: it is
   * rolled back whole, the deliveries before the failing one run again, each alone in a transaction of its
   * own (their handlers run a second time, and never a third because of a neighbour; their writes and
   * after-commit callbacks happen once), and the failure takes the path of a single delivery (retry inline,
   * pause, retry destination, dead letter). A commit that fails, or whose answer is lost, sends each
   * delivery of the batch again alone: the inbox tells which committed after all (DUPLICATE: its handler
   * does not run again, and the callbacks its committed try registered run then). A transaction that cannot
   * begin (the database away) is tried again once the database answers, spending no attempt (`DatabaseWait`).
   * Anything else (a failure before the handler, a message not due yet) goes alone, after the batch before
   * it. Nothing is answered ACK before its transaction committed. After a PAUSE or a LEAVE the rest is LEAVE.
   */
  async handleBatch(
    group: string,
    received: readonly Delivery[],
    transportControl: DeliveryControl,
  ): Promise<Settlement[]> {
    const control = this.controlOf(transportControl);
    const settled = new Map<number, Settlement>();
    const halted = () => control.isStopping() || transportControl.isHalted?.() === true;
    let index = 0;
    while (index < received.length && !halted()) {
      const together: ReadyDelivery[] = [];
      const ids = new Set<string>();
      let alone: (() => Promise<Settlement>) | undefined;
      for (; index < received.length && together.length < this.options.consumers.batchSize; index++) {
        const step = this.batchStep(group, received[index], control);
        if ('settlement' in step) {
          settled.set(index, step.settlement);
        } else if ('alone' in step) {
          alone = step.alone;
          break;
        } else if (ids.has(step.ready.envelope.messageId)) {
          break; // the same message again: in the next batch, where the inbox knows it
        } else if (together.length > 0 && otherTenant(together[0].state, step.ready)) {
          break; // one transaction is one tenant's database: the next tenant's go in the next batch
        } else {
          ids.add(step.ready.envelope.messageId);
          together.push({ index, state: step.ready });
        }
      }
      if (!(await this.runTogether(together, settled, halted)) || halted()) break;
      if (alone) {
        const settlement = await alone();
        settled.set(index++, settlement);
        if (!continues(settlement)) break;
      }
    }
    // The batch stops at its first delivery not settled, or settled PAUSE or LEAVE; everything after it is
    // LEAVE, the ones settled early included (an unhandled type, a redrive for another group: settled as the
    // batch was gathered, before a stop left the deliveries ahead of them).
    const first = received.findIndex((_, i) => {
      const settlement = settled.get(i);
      return settlement === undefined || !continues(settlement);
    });
    const stop = first < 0 ? received.length : first;
    return received.map((_, i) => (i <= stop ? settled.get(i) : undefined) ?? LEAVE);
  }

  /**
   * What to do with one delivery of a batch: settled already (a redrive for another group), ready for its
   * handler, or to go alone.
   */
  private batchStep(
    group: string,
    received: Delivery,
    control: DeliveryControl,
  ): { settlement: Settlement } | { ready: RunState } | { alone: () => Promise<Settlement> } {
    if (isRedriveForAnotherGroup(received.wire.headers, group)) {
      return { settlement: this.skipRedrive(group, received) };
    }
    const delivery = trustedDelivery(received);
    if (notDueFor(delivery, this.clock.now()) > 0)
      return { alone: () => this.handle(group, received, control) };
    const prepared = this.prepare(group, delivery, control);
    if ('ready' in prepared) return prepared;
    if ('unhandled' in prepared) return { settlement: this.settleUnhandled(prepared.unhandled) };
    return { alone: () => this.settlePrepared(group, delivery, control, prepared) };
  }

  /**
   * Runs deliveries in one transaction and settles them (see `handleBatch`). False when one was not settled
   * (PAUSE, LEAVE), or the consumer stops or loses the lane after a failure: the batch stops there.
   */
  private async runTogether(
    together: readonly ReadyDelivery[],
    settled: Map<number, Settlement>,
    halted: () => boolean,
  ): Promise<boolean> {
    let rest = together;
    let waits = 0;
    const tenant = together[0]?.state.inboxDelivery.tenant; // a batch is one tenant's (handleBatch)
    if (await this.parked(together, settled, 'behind')) return true;
    while (rest.length > 0) {
      const tried = await this.tries.together(rest);
      if (tried.kind === 'UNREACHABLE') {
        if (await this.parked(rest, settled, 'away')) return true;
        const control = { ...rest[0].state.control, isStopping: halted };
        if (!(await this.database.after(tried.error, waits++, control, tenant))) return false;
        continue;
      }
      this.database.answered(tenant);
      if (tried.kind === 'COMMITTED') {
        const { outcomes } = tried;
        return settleInOrder(rest, settled, ({ state }, i) => this.afterOutcome(state, outcomes[i]));
      }
      if (tried.kind === 'LOST') {
        // Nothing of the batch is known to hold: each goes again alone, and the inbox tells what did.
        for (const { state } of rest) state.commitLost ||= tried.atCommit;
        return this.eachAlone(rest, settled, halted);
      }
      // Rolled back whole, at a handler that failed or whose connection broke under it: the ones before go
      // again alone, where no neighbour can undo them; it goes on alone, after its failure is settled (a
      // broken connection is no failure of its own: it waits for the database in its next try).
      const { at } = tried;
      if (!(await this.eachAlone(rest.slice(0, at), settled, halted))) return false;
      const { index, state } = rest[at];
      const ownFailure = tried.kind === 'FAILED' || connectionLossIsOwn(state);
      const settlement =
        (ownFailure ? await this.failures.handlerFailed(state, tried.error) : undefined) ??
        (await this.run(state));
      settled.set(index, settlement);
      if (!continues(settlement) || halted()) return false;
      rest = rest.slice(at + 1);
    }
    return true;
  }

  /** Runs and settles deliveries one by one, each in a transaction of its own (LEAVE once halted). */
  private eachAlone(
    deliveries: readonly ReadyDelivery[],
    settled: Map<number, Settlement>,
    halted: () => boolean,
  ): Promise<boolean> {
    return settleInOrder(deliveries, settled, ({ state }) =>
      halted() ? Promise.resolve(LEAVE) : this.run(state),
    );
  }

  private skipRedrive(group: string, received: Delivery): Settlement {
    // A redrive brings a message back to the one group that failed it; the others had it already.
    this.metrics.consumed.inc({ group, destination: received.wire.destination, outcome: 'skipped' });
    return ACK;
  }

  private controlOf(transportControl: DeliveryControl): DeliveryControl {
    return {
      keepAlive: () => transportControl.keepAlive(),
      isStopping: () => this.stopping || transportControl.isStopping(),
      ...(transportControl.replaying ? { replaying: true } : {}),
    };
  }

  /**
   * Parks ready deliveries of one tenant in the service's database and settles them ACK (tenants on, see
   * `TenantParking`): `behind`, when their lane is parked already (they go behind what is parked, keeping the
   * order); `away`, when the tenant's database has not answered for `tenants.parkAfterMs`. False (nothing
   * done) otherwise, for deliveries handed over from the parked table, or when the service's database
   * refuses the write: then they are handled, or wait for the database, as without parking.
   */
  private async parked(
    deliveries: readonly ReadyDelivery[],
    settled: Map<number, Settlement>,
    why: 'behind' | 'away',
  ): Promise<boolean> {
    const first = deliveries[0]?.state;
    const tenant = first?.inboxDelivery.tenant;
    const parkAfterMs = this.parking?.parkAfterMs;
    if (!this.parking || parkAfterMs === undefined || tenant === undefined || first.control.replaying)
      return false;
    if (why === 'behind' && !this.parking.isParked(first.group, tenant)) return false;
    if (why === 'away' && this.database.awayFor(tenant) < parkAfterMs) return false;
    // One whose commit answer was lost keeps waiting: a later try tells whether it committed, and then runs
    // the after-commit callbacks that try registered, which a parked copy would not have.
    if (why === 'away' && deliveries.some(({ state }) => state.commitLost)) return false;
    const states = deliveries.map(({ state }) => state);
    if (
      !(await this.parking.park(
        first.group,
        tenant,
        states.map((state) => state.delivery),
        why,
      ))
    )
      return false;
    for (const { index, state } of deliveries) {
      settled.set(index, ACK);
      this.metrics.consumed.inc({ ...state.labels, outcome: 'parked' });
    }
    return true;
  }

  /**
   * Decodes, finds the handler, upcasts and validates: ready to run (no longer held, if it was), unhandled,
   * held or unprocessable (the failure path's).
   */
  private prepare(group: string, delivery: Delivery, control: DeliveryControl): Prepared {
    const prepared = prepareDelivery(
      this.registry,
      this.options,
      group,
      delivery,
      control,
      this.clock,
      this.tenants,
    );
    if ('ready' in prepared) this.failures.released(group, prepared.ready.envelope.messageId);
    return prepared;
  }

  /**
   * Runs the handler, each try in a transaction of its own, until it succeeds or its failure is settled. A
   * commit that fails goes again once (its answer may have been lost after it committed: the inbox tells)
   * before it counts as the delivery's failure; when a commit fails again, the inbox is asked whether that
   * one held before the failure is settled (a message that committed is never dead-lettered). A transaction
   * that cannot begin waits for the database (LEAVE if the consumer stops first) and counts as nothing.
   */
  private async run(state: RunState): Promise<Settlement> {
    let waits = 0;
    const alone = [{ index: 0, state }];
    const parked = new Map<number, Settlement>();
    if (await this.parked(alone, parked, 'behind')) return ACK;
    for (;;) {
      const tried = await this.tries.together(alone);
      if (tried.kind === 'UNREACHABLE' || (tried.kind === 'BROKEN' && !connectionLossIsOwn(state))) {
        if (await this.parked(alone, parked, 'away')) return ACK;
        const { tenant } = state.inboxDelivery;
        if (!(await this.database.after(tried.error, waits++, state.control, tenant))) return LEAVE;
        continue;
      }
      this.database.answered(state.inboxDelivery.tenant);
      if (tried.kind === 'COMMITTED') return this.afterOutcome(state, tried.outcomes[0]);
      if (tried.kind === 'LOST' && tried.atCommit && !state.commitLost) {
        state.commitLost = true;
        this.logger.warn(
          `${describeMessage(state.envelope, state.group, state.attempt)}: the commit failed ` +
            `(${errorLine(tried.error)}); it goes again once, and the inbox tells whether it committed.`,
        );
        continue;
      }
      if (tried.kind === 'LOST' && tried.atCommit) {
        const held = await this.heldAfterFailedCommit(state);
        if (held === undefined) return LEAVE;
        if (held) return this.afterOutcome(state, 'DUPLICATE');
      }
      const settlement = await this.failures.handlerFailed(state, tried.error);
      if (settlement) return settlement;
    }
  }

  /**
   * Whether the inbox holds a delivery whose commit failed again: it committed after all when its answer was
   * lost. Waits for the database while it does not answer; undefined when the consumer stops first.
   */
  private async heldAfterFailedCommit(state: RunState): Promise<boolean | undefined> {
    for (let waits = 0; ; waits++) {
      try {
        const held = await this.inbox.holds(state.inboxDelivery);
        this.database.answered(state.inboxDelivery.tenant);
        return held;
      } catch (error) {
        const { tenant } = state.inboxDelivery;
        if (!(await this.database.after(error, waits, state.control, tenant))) return undefined;
      }
    }
  }

  /**
   * How a committed try ends: ACK (handled or a duplicate), or a CONFLICT dead-lettered. A DUPLICATE after
   * a try whose commit answer was lost: that try did commit, so the after-commit callbacks it registered
   * run now; HANDLED: it did not, and they are dropped (this try's own ran at its commit).
   */
  private async afterOutcome(state: RunState, outcome: InboxOutcome): Promise<Settlement> {
    const { group, delivery, control, envelope, labels } = state;
    const unconfirmed = state.unconfirmed.splice(0);
    if (outcome === 'DUPLICATE') this.tries.runCallbacks(unconfirmed);
    if (outcome === 'CONFLICT')
      return this.failures.conflict({ group, delivery, control, attempt: state.attempt }, envelope);
    if (outcome === 'DUPLICATE') {
      this.logger.debug(`${describeMessage(envelope, group, state.attempt)}: duplicate, skipped.`);
    }
    this.metrics.consumed.inc({ ...labels, outcome: outcome === 'DUPLICATE' ? 'duplicate' : 'handled' });
    return ACK;
  }
}

/** Whether two deliveries belong to different tenants (tenants on), hence to different databases. */
function otherTenant(a: RunState, b: RunState): boolean {
  return a.inboxDelivery.tenant !== b.inboxDelivery.tenant;
}

/**
 * Counts a connection that broke under the delivery's handler. False while it waits for the database like a
 * transaction that cannot begin; true past `MAX_CONNECTION_LOSSES` for the delivery: then it is the handler's
 * own failure (a handler that breaks its own connection every time must not wait for ever).
 */
function connectionLossIsOwn(state: RunState): boolean {
  state.connectionLosses += 1;
  return state.connectionLosses > MAX_CONNECTION_LOSSES;
}
