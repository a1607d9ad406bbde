import { Client } from 'pg';
import { encodeEnvelope, WireMessage } from 'nest-reliable-messaging/testing';
import { BENCH_EVENT_TYPE } from './bench-event';

/** Where rows go: the schema-qualified outbox table. */
export function outboxTable(schema: string): string {
  return `"${schema}".messaging_outbox`;
}

export interface FillOptions {
  destination: string;
  rows: number;
  keys: number;
  /** The `pad` of each payload (see `padding()`). */
  pad: string;
  /** Payloads carry it, so that each run's messages can be told apart. */
  run: string;
  /** Rows already sent (`sent_at` set): the growth scenario's history. Default false: pending rows. */
  sent?: boolean;
  /** First sequence number. Default 0. */
  firstSeq?: number;
}

/**
 * Inserts rows into the library's outbox table in one statement (`generate_series`), as `OutboxService.add()`
 * would have (same columns, payload shape and keys), but without a transaction per row.
 */
export async function fillOutbox(client: Client, schema: string, options: FillOptions): Promise<void> {
  const first = options.firstSeq ?? 0;
  await client.query(
    `insert into ${outboxTable(schema)} (message_id, destination, type, key, headers, payload, occurred_at, sent_at)
     select gen_random_uuid(), $1, $2, 'key-' || (i % $3), '{}'::jsonb,
            jsonb_build_object('run', $4::text, 'seq', i, 'key', 'key-' || (i % $3), 'pad', $5::text),
            now(), case when $6 then now() end
     from generate_series($7::bigint, $8::bigint) as i`,
    [
      options.destination,
      BENCH_EVENT_TYPE,
      options.keys,
      options.run,
      options.pad,
      options.sent ?? false,
      first,
      first + options.rows - 1,
    ],
  );
}

/** An outbox row as read back (`payload` as the JSON text the relay sends). */
export interface OutboxRecord {
  id: string;
  message_id: string;
  destination: string;
  type: string;
  key: string;
  headers: Record<string, string>;
  payload: string;
  occurred_at: Date;
}

/** The columns of `OutboxRecord`, for a select. */
export const RECORD_COLUMNS =
  'id, message_id, destination, type, key, headers, payload::text as payload, occurred_at';

/** A row as the relay puts it on the wire (the library's envelope encoding). */
export function toWireMessage(r: OutboxRecord): WireMessage {
  return encodeEnvelope(
    {
      messageId: r.message_id,
      type: r.type,
      destination: r.destination,
      key: r.key,
      occurredAt: r.occurred_at,
      headers: r.headers,
    },
    r.payload,
  );
}

/** The pending rows as the relay would put them on the wire: the baseline publishes the very same bytes. */
export async function pendingWireMessages(client: Client, schema: string): Promise<WireMessage[]> {
  const { rows } = await client.query<OutboxRecord>(
    `select ${RECORD_COLUMNS} from ${outboxTable(schema)} where sent_at is null order by id`,
  );
  return rows.map(toWireMessage);
}

/** Rows of the outbox not sent yet. */
export async function pendingCount(client: Client, schema: string): Promise<number> {
  const { rows } = await client.query<{ n: string }>(
    `select count(*) as n from ${outboxTable(schema)} where sent_at is null`,
  );
  return Number(rows[0].n);
}
