import { createHash } from 'node:crypto';
import { NewOutboxRow } from '../outbox-row';
import { keyOf } from '../publishing/batch-outcomes';
import { SqlRunner } from './replication-slot';

/** A message to park, and why (a short reason without payload data). */
export interface MessageToPark {
  readonly row: NewOutboxRow;
  readonly error: string;
  /**
   * Kept out of the polling relay's way (`available_at` a thousand years ahead): a message no broker may be
   * given (content that did not decode, an id reused with another payload). It stays pending, in the outbox
   * backlog of health and metrics, until an operator deals with it.
   */
  readonly hold?: boolean;
}

/** What `park()` did beyond inserting: messages whose id a different message held already. */
export interface ParkResult {
  /** Parked under a new id derived from theirs (held), since their own was taken by a different message. */
  readonly idConflicts: ReadonlyArray<{ readonly messageId: string; readonly parkedAs: string }>;
}

/** The class of SQLSTATEs for data the statement refuses (`22…`: bad text for jsonb, a value too long). */
const DATA_EXCEPTION = /^22/;

/**
 * Where the logical relay parks messages the broker keeps failing, and every later message of their keys: the
 * outbox table, as pending rows with the failure in `last_error`. There an operator sees them (the outbox
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
   * restart) is there already: left as it is when it is the same message (id, destination, type, key and
   * payload); a different message with that id is parked under an id derived from its own and held, and
   * returned. When the statement refuses the data (a payload jsonb refuses), the messages are parked one by
   * one, and one that still cannot be is parked held with its payload as a JSON string.
   */
  async park(messages: readonly MessageToPark[]): Promise<ParkResult> {
    if (messages.length === 0) return { idConflicts: [] };
    try {
      return await this.insert(messages);
    } catch (error) {
      if (!isDataException(error)) throw error;
    }
    const idConflicts: Array<ParkResult['idConflicts'][number]> = [];
    for (const message of messages) {
      const result = await this.insert([message]).catch(async (error: unknown) => {
        if (!isDataException(error)) throw error;
        return this.insert([asText(message, error)]);
      });
      idConflicts.push(...result.idConflicts);
    }
    return { idConflicts };
  }

  /** The keys (`keyOf`) of every pending row of the outbox: the stream must not overtake them. */
  async pendingKeys(): Promise<Set<string>> {
    const rows = await this.sql<{ destination: string; key: string }>(
      `select distinct destination, key from ${this.outbox} where sent_at is null`,
    );
    return new Set(rows.map(keyOf));
  }

  private async insert(messages: readonly MessageToPark[]): Promise<ParkResult> {
    const rows = messages.map((m) => m.row);
    // The rows already there with a different message under the same id (not those this statement inserts).
    const conflicts = await this.sql<{ message_id: string }>(
      `with p as (
         select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                              $7::timestamptz[], $8::text[], $9::boolean[]) with ordinality
           as p(message_id, destination, type, key, headers, payload, occurred_at, error, hold, n)
       ),
       inserted as (
         insert into ${this.outbox}
           (message_id, destination, type, key, headers, payload, occurred_at, attempts, last_error, available_at)
         select p.message_id, p.destination, p.type, p.key, p.headers::jsonb, p.payload::jsonb, p.occurred_at, 1,
                p.error, case when p.hold then now() + interval '1000 years' else now() end
         from p order by p.n
         on conflict (message_id) do nothing
         returning message_id
       )
       select p.message_id::text as message_id from p join ${this.outbox} o on o.message_id = p.message_id
       where (o.destination, o.type, o.key, o.payload) is distinct from
             (p.destination, p.type, p.key, p.payload::jsonb)
       order by p.n`,
      [
        rows.map((r) => r.messageId),
        rows.map((r) => r.destination),
        rows.map((r) => r.type),
        rows.map((r) => r.key),
        rows.map((r) => JSON.stringify(r.headers)),
        rows.map((r) => r.payloadJson),
        rows.map((r) => r.occurredAt),
        messages.map((m) => m.error.slice(0, 500)),
        messages.map((m) => m.hold === true),
      ],
    );
    if (conflicts.length === 0) return { idConflicts: [] };
    const conflicting = new Set(conflicts.map((c) => c.message_id));
    const taken = messages.filter((m) => conflicting.has(m.row.messageId));
    const again = taken.map((m) => ({
      row: { ...m.row, messageId: derivedMessageId(m.row.messageId, m.row.payloadJson) },
      error: `ID_CONFLICT: message id ${m.row.messageId} was parked already with another message; ${m.error}`,
      hold: true,
    }));
    await this.insert(again);
    return {
      idConflicts: taken.map((m, i) => ({ messageId: m.row.messageId, parkedAs: again[i].row.messageId })),
    };
  }
}

/**
 * A message id (UUID version 8) made from `seed` and `content`: the same each time the stream is read again,
 * so that a re-read parks nothing twice.
 */
export function derivedMessageId(seed: string, content: string | Buffer): string {
  const hash = createHash('sha256').update(seed).update('\u0000').update(content).digest();
  hash[6] = (hash[6] & 0x0f) | 0x80; // version 8
  hash[8] = (hash[8] & 0x3f) | 0x80; // RFC 4122 variant
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The message with its payload as a JSON string of its text (and no headers), held: what jsonb refused. */
function asText(message: MessageToPark, error: unknown): MessageToPark {
  const code = (error as { code?: string }).code ?? 'unknown';
  return {
    row: {
      ...message.row,
      headers: {},
      // A JSON string of the text: its \u0000 escapes become plain text, which jsonb takes.
      payloadJson: JSON.stringify(message.row.payloadJson),
    },
    error: `UNPARKABLE (${code}): the payload was refused by jsonb and is kept as text; ${message.error}`,
    hold: true,
  };
}

function isDataException(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && DATA_EXCEPTION.test(code);
}
