import { WireMessage } from '../envelope/wire-message';
import { MessagingTables } from '../tables/messaging-tables';
import { Delivery, DeliveryOrigin } from '../transports/delivery-contract';

/** A delivery parked in the service's database: its row's id and what the transport had handed over. */
export interface ParkedDelivery extends Delivery {
  readonly id: string;
}

/** A consumer group's parked deliveries of one tenant: how many. */
export interface ParkedLane {
  readonly group: string;
  readonly tenant: string;
  readonly count: number;
}

/**
 * `messaging_parked`, in the service's own database, in one database's SQL (`database/postgres`,
 * `database/mysql`): a tenant's deliveries kept while its database does not answer (`TenantParking`).
 */
export abstract class ParkedStore {
  abstract readonly tables: MessagingTables;
  /** The migration that creates the table and the exported list that holds it, for the startup error. */
  abstract readonly migration: { readonly name: string; readonly list: string };

  /** True when the table exists (its migration ran). */
  abstract tableExists(): Promise<boolean>;

  /** Parks one lane's deliveries, in one statement: their ids follow their order. */
  abstract park(group: string, tenant: string, deliveries: readonly Delivery[]): Promise<void>;

  /** The (group, tenant) lanes with deliveries parked, in any order. */
  abstract lanes(): Promise<ParkedLane[]>;

  /** How many deliveries the lane has parked. */
  abstract count(group: string, tenant: string): Promise<number>;

  /**
   * In a transaction of its own: locks the lane's first `limit` parked deliveries, in id order, hands them to
   * `work`, deletes the ids it returns and commits. Undefined, without calling `work`, when another instance
   * holds them (it drains the lane); else how many were taken and how many deleted. A delete whose commit
   * fails leaves the rows: they are handed over again, and the inbox tells what was applied.
   */
  abstract drain(
    group: string,
    tenant: string,
    limit: number,
    work: (parked: readonly ParkedDelivery[]) => Promise<readonly string[]>,
  ): Promise<{ taken: number; deleted: number } | undefined>;
}

/** A row of the table, as both databases' drivers return it (JSON columns parsed or as text). */
export interface ParkedRow {
  readonly id: string | number;
  readonly destination: string;
  readonly key: string | null;
  readonly headers: string | Record<string, string>;
  readonly origin: string | DeliveryOrigin;
  readonly body: Buffer;
}

/** The delivery a row holds. */
export function parkedDelivery(row: ParkedRow): ParkedDelivery {
  const wire: WireMessage = {
    destination: row.destination,
    key: row.key,
    headers: parsed(row.headers),
    body: Buffer.from(row.body),
  };
  return { id: String(row.id), wire, origin: parsed(row.origin) };
}

function parsed<T>(value: string | T): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}
