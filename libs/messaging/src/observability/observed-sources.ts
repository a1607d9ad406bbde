/**
 * What observability reads from the parts it watches, as narrow contracts of its own: the outbox, the logical
 * relay and the consumers stand above observability (they record metrics and traces through it), so it
 * names only what it reads and the core module hands it the parts themselves (`useExisting`).
 * Abstract classes, so that each serves as its own injection token.
 */

/** Pending rows of one destination and the age of the oldest. */
export interface OutboxBacklog {
  readonly destination: string;
  readonly pending: number;
  readonly oldestAgeMs: number;
}

/** The outbox's figures read on demand (the outbox store). */
export abstract class OutboxFigures {
  /** Pending rows per destination. */
  abstract backlog(): Promise<OutboxBacklog[]>;
  /** The library's tables and their estimated row counts. */
  abstract tableRowEstimates(): Promise<Array<{ table: string; rows: number }>>;
  /** Scheduled messages waiting, and milliseconds until the first is due (negative: overdue). */
  abstract scheduledFigures(): Promise<{ scheduled: number; nextDueInMs: number | undefined }>;
}

/** The logical relay's replication slot, as health and metrics read it (the logical relay). */
export abstract class RelaySlotFigures {
  /** This instance's view, without I/O: its state, the slot's name, and while reading the lag. */
  abstract status(): {
    readonly state: string;
    readonly slot: string;
    readonly problem?: string;
    readonly lagSeconds?: number;
    readonly unconfirmed?: number;
  };
  /** The slot as PostgreSQL describes it, or undefined when it does not exist. */
  abstract slotState(): Promise<
    { readonly active: boolean; readonly walStatus?: string; readonly lagBytes?: number } | undefined
  >;
}

/** The consumer groups whose subscription runs (the consumer orchestrator). */
export abstract class RunningConsumers {
  /** The groups running now (joined, receiving deliveries). */
  abstract runningGroups(): string[];
  /** The groups started that do not receive deliveries yet (joining their group, or subscribing again). */
  abstract joiningGroups(): string[];
}

/** Messages the consumers hold because they cannot read them yet (the consumers' held messages). */
export abstract class HeldMessageFigures {
  /** Now, without I/O: how many are held, the oldest one's time held, and the window after which they are dead-lettered. */
  abstract heldNow(): { readonly count: number; readonly oldestHeldMs: number; readonly windowMs: number };
}

/** Each tenant's database and outbox backlog, as health reads them (tenants on; `MessagingTenants`). */
export abstract class TenantFigures {
  /** One entry per registered tenant; a database that does not answer is `up: false`. */
  abstract status(): Promise<
    ReadonlyArray<{
      readonly tenant: string;
      readonly up: boolean;
      readonly pending: number;
      readonly oldestPendingAgeMs: number;
      /** `relay.mode: 'logical'`: why its relay cannot read its slot. */
      readonly relayProblem?: string;
    }>
  >;
}
