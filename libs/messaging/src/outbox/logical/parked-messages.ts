import { NewOutboxRow } from '../outbox-row';
import { keyOf } from '../relay-batch';
import { SqlRunner } from './replication-slot';

/** A message to park, and why (a short reason without payload data). */
export interface MessageToPark {
  readonly row: NewOutboxRow;
  readonly error: string;
}

/**
 * Where the logical relay parks messages the broker refuses, and every later message of their keys: the
 * outbox table, as pending rows with the refusal in `last_error`. There an operator sees them (the outbox
 * backlog in health and metrics, the table itself), nothing is lost, the slot moves on, and the polling relay,
 * which runs beside the logical one, keeps trying them in each key's order with its backoff.
 */
export class ParkedMessages {
  constructor(
    private readonly sql: SqlRunner,
    /** The outbox table, schema-qualified. */
    private readonly outbox: string,
  ) {}

  /**
   * Inserts the messages in order, one statement. A message parked before (the stream read again after a
   * restart) is there already and is left as it is (the message id's unique index).
   */
  async park(messages: readonly MessageToPark[]): Promise<void> {
    if (messages.length === 0) return;
    const rows = messages.map((m) => m.row);
    await this.sql(
      `insert into ${this.outbox}
         (message_id, destination, type, key, headers, payload, occurred_at, attempts, last_error)
       select p.message_id, p.destination, p.type, p.key, p.headers::jsonb, p.payload::jsonb, p.occurred_at, 1, p.error
       from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
                   $8::text[]) with ordinality
         as p(message_id, destination, type, key, headers, payload, occurred_at, error, n)
       order by p.n
       on conflict (message_id) do nothing`,
      [
        rows.map((r) => r.messageId),
        rows.map((r) => r.destination),
        rows.map((r) => r.type),
        rows.map((r) => r.key),
        rows.map((r) => JSON.stringify(r.headers)),
        rows.map((r) => r.payloadJson),
        rows.map((r) => r.occurredAt),
        messages.map((m) => m.error.slice(0, 500)),
      ],
    );
  }

  /** The keys (`keyOf`) of every pending row of the outbox: the stream must not overtake them. */
  async pendingKeys(): Promise<Set<string>> {
    const rows = await this.sql<{ destination: string; key: string }>(
      `select distinct destination, key from ${this.outbox} where sent_at is null`,
    );
    return new Set(rows.map(keyOf));
  }
}
