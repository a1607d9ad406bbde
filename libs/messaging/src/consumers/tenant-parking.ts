import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { CancelTimer, Clock } from '../common/clock';
import { ParkedStore } from '../inbox/parked-store';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS } from '../messaging.constants';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { Delivery, DeliveryControl, Settlement } from '../transports/delivery-contract';
import { errorLine } from './delivery-description';

/** Runs parked deliveries of a group through the pipeline, in order, and says how each settled. */
export type ParkedReplay = (
  group: string,
  deliveries: readonly Delivery[],
  control: DeliveryControl,
) => Promise<Settlement[]>;

/**
 * Whether a tenant's database answers within `timeoutMs` (true for a tenant not registered: the pipeline says
 * what becomes of its deliveries). The drain asks before it locks the lane's rows.
 */
export type TenantAnswers = (tenant: string, timeoutMs: number) => Promise<boolean>;

/** How often the parked lanes are looked at (and drained, once their tenant's database answers). */
export const LOOK_EVERY_MS = 1_000;
/**
 * A drain asks the tenant's database for `select 1` and waits this long at most for its answer; its batch,
 * once the rows are locked, waits this long at most for a database that stopped answering meanwhile.
 */
const DRAIN_WAIT_MS = 2_000;
/** After a drain that applied nothing, the next waits 1 s, doubling to this (the database wait's longest). */
const IDLE_DRAIN_BACKOFF_MAX_MS = 5_000;

interface LaneState {
  readonly group: string;
  readonly tenant: string;
  /** The lane's deliveries are parked (here, or by another instance: seen at the last look). */
  parked: boolean;
  /** Serialises parking in this lane with the switch back to straight handling. */
  turn: Promise<void>;
  /** A drain waits until then (clock ms): a parked delivery's retry asked for a pause. */
  notBefore: number;
  /** Drains in a row that applied nothing (the database still away): each waits longer, up to 5 s. */
  idleDrains: number;
}

/**
 * With tenants on, keeps a tenant whose database does not answer from stopping the others. Its deliveries,
 * held in the consumer waiting for that database, would otherwise add up while its messages keep arriving:
 * on RabbitMQ they fill the channel's prefetch and the broker sends nothing more, on Kafka a partition's fetch
 * waits once 1,000 of its messages are unfinished, the other tenants' messages included.
 *
 * So once a tenant's database has not answered for `tenants.parkAfterMs`, the consumer parks its deliveries:
 * it writes them to `messaging_parked` in the service's own database (one statement per batch) and only then
 * settles them on the broker. From then on, every delivery of that group and tenant is parked behind them, in
 * the order the lane received it, so a key's messages keep their order. Every second this instance looks at
 * the parked lanes: one whose tenant's database answers (asked with `select 1` first: while it does not, the
 * service's database holds nothing for it) is drained in `id` order through the pipeline (the
 * inbox, the handler, the retry rules, as any delivery), a transaction in the service's database holding
 * the rows (`for update nowait`: one instance drains a lane at a time) until they are applied; the lane goes
 * back to straight handling once nothing is parked in it, decided in the same turn as parking, so nothing
 * parked can be overtaken. A delivery applied whose row's delete is lost is handed over again, and the inbox
 * skips it. Another instance sees a lane parked at its next look (within a second); until then it may apply a
 * later message of that tenant straight away, which on RabbitMQ (competing consumers, no order across
 * instances) changes nothing, and on Kafka only happens when a partition moves between instances.
 */
@Injectable()
export class TenantParking implements BeforeApplicationShutdown {
  private readonly logger = new Logger('MessagingConsumer');
  private readonly lanes = new Map<string, LaneState>();
  private replay?: ParkedReplay;
  private answers: TenantAnswers = async () => true;
  private groups: () => readonly string[] = () => [];
  private running = false;
  private timer?: CancelTimer;
  private look?: Promise<void>;
  /** The last look failed (logged once until one works again). */
  private lookFailing = false;

  constructor(
    private readonly store: ParkedStore,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
    private readonly metrics: MessagingMetrics,
  ) {}

  /** How long a tenant's database may not answer before its deliveries are parked; undefined: tenants off. */
  get parkAfterMs(): number | undefined {
    return this.options.tenants?.parkAfterMs;
  }

  /** Whether the group's deliveries of `tenant` are parked: a new one goes behind them (`park`). */
  isParked(group: string, tenant: string): boolean {
    return this.lanes.get(laneKey(group, tenant))?.parked === true;
  }

  /**
   * Parks deliveries of one lane, in their order, and says whether it did: `away`, the tenant's database did
   * not answer for `parkAfterMs` (the lane is parked from now on); `behind`, the lane was parked when they came
   * (false when it went back to straight handling meanwhile: handle them so). False too when the service's
   * database refuses the write (logged): the caller keeps waiting, as without parking.
   */
  async park(
    group: string,
    tenant: string,
    deliveries: readonly Delivery[],
    why: 'away' | 'behind',
  ): Promise<boolean> {
    const lane = this.lane(group, tenant);
    return this.inTurn(lane, async () => {
      if (why === 'behind' && !lane.parked) return false;
      try {
        await this.store.park(group, tenant, deliveries);
      } catch (error) {
        this.logger.warn(
          `Could not park ${deliveries.length} deliveries of tenant ${tenant} (group ${group}) in the ` +
            `service's database (${errorLine(error)}): they wait in the consumer for the tenant's database.`,
        );
        return false;
      }
      if (!lane.parked) {
        lane.parked = true;
        this.logger.warn(
          `Tenant ${tenant}'s database has not answered for ${this.parkAfterMs} ms: group ${group} parks its ` +
            `deliveries in ${this.store.tables.parked} and applies them, in order, once it answers again.`,
        );
      }
      return true;
    });
  }

  /**
   * Starts looking at the parked lanes (consumers started), replaying through `replay` the lanes whose
   * tenant's database `answers`.
   */
  resume(replay: ParkedReplay, groups: () => readonly string[], answers?: TenantAnswers): void {
    if (this.parkAfterMs === undefined || this.running) return;
    this.replay = replay;
    if (answers) this.answers = answers;
    this.groups = groups;
    this.running = true;
    this.schedule();
  }

  /** Stops looking; a drain under way leaves what it did not apply parked. */
  async pause(): Promise<void> {
    this.running = false;
    this.timer?.();
    this.timer = undefined;
    await this.look;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.pause();
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.look = this.lookAtLanes()
        .then(() => {
          if (this.lookFailing) this.logger.log('Looking at parked deliveries works again.');
          this.lookFailing = false;
        })
        .catch((error: Error) => {
          // Once per streak: the service's database away would otherwise log a line a second.
          if (!this.lookFailing) {
            this.logger.warn(
              `Looking at parked deliveries failed (${errorLine(error)}); trying every second.`,
            );
          }
          this.lookFailing = true;
        })
        .finally(() => {
          this.look = undefined;
          this.schedule();
        });
    }, LOOK_EVERY_MS);
  }

  /** Marks the lanes parked in the table (by any instance), drains them, and switches back the empty ones. */
  private async lookAtLanes(): Promise<void> {
    const groups = new Set(this.groups());
    const found = (await this.store.lanes()).filter((lane) => groups.has(lane.group));
    const counts = new Map<string, number>([...groups].map((group) => [group, 0]));
    for (const { group, count } of found) counts.set(group, (counts.get(group) ?? 0) + count);
    for (const [group, count] of counts) this.metrics.parkedDeliveries.set({ group }, count);
    const seen = new Set(found.map(({ group, tenant }) => laneKey(group, tenant)));
    for (const { group, tenant } of found) this.lane(group, tenant).parked = true;
    for (const [key, lane] of this.lanes) {
      if (lane.parked && !seen.has(key)) await this.switchBack(lane);
    }
    for (const { group, tenant } of found) {
      if (!this.running) return;
      const lane = this.lane(group, tenant);
      if (this.clock.now() >= lane.notBefore) await this.drain(lane);
    }
  }

  /**
   * Applies the lane's parked deliveries, a batch at a time, until it is empty or one cannot be settled. Asks
   * first whether the tenant's database answers: while it does not, no transaction of the service's database
   * is begun and no row locked for it.
   */
  private async drain(lane: LaneState): Promise<void> {
    const replay = this.replay;
    if (!replay) return;
    if (!(await this.answers(lane.tenant, DRAIN_WAIT_MS))) return this.waitLonger(lane);
    const limit = this.options.consumers.batchSize;
    for (;;) {
      if (!this.running) return;
      const waitUntil = this.clock.now() + DRAIN_WAIT_MS;
      const control: DeliveryControl = {
        keepAlive: async () => undefined,
        isStopping: () => !this.running || this.clock.now() > waitUntil,
        replaying: true,
      };
      const result = await this.store.drain(lane.group, lane.tenant, limit, async (parked) => {
        const settlements = await replay(lane.group, parked, control);
        const done: string[] = [];
        for (const [i, settlement] of settlements.entries()) {
          if (settlement.kind === 'ACK' || settlement.kind === 'DROP') done.push(parked[i].id);
          else {
            if (settlement.kind === 'PAUSE') lane.notBefore = this.clock.now() + settlement.delayMs;
            break;
          }
        }
        return done;
      });
      if (result === undefined) return; // another instance drains it
      if (result.deleted === 0 && result.taken > 0) return this.waitLonger(lane);
      lane.idleDrains = 0;
      if (result.deleted < result.taken) return; // one could not be settled: again later
      if (result.taken < limit) return void (await this.switchBack(lane));
    }
  }

  /** Nothing applied (the tenant's database still away): the next try waits longer, not a look a second. */
  private waitLonger(lane: LaneState): void {
    lane.idleDrains += 1;
    const backoff = Math.min(IDLE_DRAIN_BACKOFF_MAX_MS, LOOK_EVERY_MS * 2 ** (lane.idleDrains - 1));
    lane.notBefore = Math.max(lane.notBefore, this.clock.now() + backoff);
  }

  /** Back to straight handling when nothing is parked in the lane (decided in the lane's turn). */
  private async switchBack(lane: LaneState): Promise<void> {
    await this.inTurn(lane, async () => {
      if (!lane.parked || (await this.store.count(lane.group, lane.tenant)) > 0) return;
      lane.parked = false;
      this.logger.log(
        `Tenant ${lane.tenant}: the deliveries group ${lane.group} parked are applied; its deliveries go ` +
          'straight to its database again.',
      );
    });
  }

  private lane(group: string, tenant: string): LaneState {
    const key = laneKey(group, tenant);
    let lane = this.lanes.get(key);
    if (!lane)
      this.lanes.set(
        key,
        (lane = { group, tenant, parked: false, turn: Promise.resolve(), notBefore: 0, idleDrains: 0 }),
      );
    return lane;
  }

  /** Runs `work` after the lane's earlier turns. */
  private async inTurn<T>(lane: LaneState, work: () => Promise<T>): Promise<T> {
    const previous = lane.turn;
    let release!: () => void;
    lane.turn = new Promise<void>((resolve) => (release = resolve));
    await previous;
    try {
      return await work();
    } finally {
      release();
    }
  }
}

function laneKey(group: string, tenant: string): string {
  return `${group}\u0000${tenant}`;
}
