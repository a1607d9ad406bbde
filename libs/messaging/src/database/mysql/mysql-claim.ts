import { QueryRunner } from 'typeorm';
import { ClaimedOutboxRow } from '../../outbox/outbox-row';
import { idList, parseUtc, UTC_ISO } from './mysql-sql';

interface PickedRecord {
  /** A string, unless the application turned the driver's `bigNumberStrings` off. */
  id: string | number;
  message_id: string;
  destination: string;
  type: string;
  key: string;
  headers: string;
  payload: string;
  occurred_at: string;
  created_at: string;
  attempts: number | string;
}

/** What one claim asks for (see `OutboxStore.claim`). */
export interface MysqlClaim {
  readonly limit: number;
  readonly owner: string;
  readonly leaseMs: number;
  readonly inFlight: readonly string[];
}

/**
 * The claim, inside the caller's READ COMMITTED transaction, in three statements:
 * 1. pick the first `limit` claimable rows in id order, `FOR UPDATE SKIP LOCKED` (rows a concurrent claim
 *    or an uncommitted insert holds are passed over, not waited for), through `(sent_at, id)`: the pending
 *    rows are the `sent_at is null` prefix of that index, so sent rows are never read;
 * 2. per key of the picked rows, the first pending row left out of the claim (`gap`): one probe of the
 *    `(destination, key_hash, sent_at, id)` index per key, in one statement over a `JSON_TABLE` of the keys;
 * 3. lease the rows before their key's gap.
 */
export async function claimMysqlRows(
  queryRunner: QueryRunner,
  table: string,
  claim: MysqlClaim,
): Promise<ClaimedOutboxRow[]> {
  // The planner would rather walk the primary key in id order, through every sent row: the hint keeps it
  // on the pending prefix.
  const records = (await queryRunner.query(
    `select id, message_id, destination, type, \`key\`,
            cast(headers as char) as headers, cast(payload as char) as payload,
            date_format(occurred_at, ${UTC_ISO}) as occurred_at, date_format(created_at, ${UTC_ISO}) as created_at,
            attempts
     from ${table} force index (messaging_outbox_pending_idx)
     where sent_at is null and available_at <= utc_timestamp(6)
       and (locked_until is null or locked_until <= utc_timestamp(6))
     order by id limit ?
     for update skip locked`,
    [claim.limit],
  )) as PickedRecord[];
  if (records.length === 0) return [];
  const picked = records.map((r) => ({ ...r, id: String(r.id) }));

  const keyOf = (r: { destination: string; key: string }) => JSON.stringify([r.destination, r.key]);
  const keys = [...new Set(picked.map(keyOf))];
  const excluded = idList([...picked.map((r) => r.id), ...claim.inFlight]);
  const gaps = (await queryRunner.query(
    `select k.i as i, (
         select b.id from ${table} b
         where b.sent_at is null and b.destination = k.destination
           and b.key_hash = unhex(sha2(k.\`key\`, 256)) and b.\`key\` = k.\`key\`
           and b.id not in (${excluded})
         order by b.id limit 1
       ) as gap
     from json_table(?, '$[*]' columns (
            i int path '$[0]',
            destination varchar(200) character set utf8mb4 collate utf8mb4_bin path '$[1]',
            \`key\` longtext character set utf8mb4 collate utf8mb4_bin path '$[2]')) k`,
    [JSON.stringify(keys.map((key, i) => [i, ...(JSON.parse(key) as string[])]))],
  )) as Array<{ i: number | string; gap: string | number | null }>;
  const gapOf = new Map(gaps.map((g) => [keys[Number(g.i)], g.gap === null ? undefined : BigInt(g.gap)]));
  const taken = picked.filter((r) => {
    const gap = gapOf.get(keyOf(r));
    return gap === undefined || BigInt(r.id) < gap;
  });
  if (taken.length === 0) return [];

  await queryRunner.query(
    `update ${table} set locked_by = ?, locked_until = utc_timestamp(6) + interval ? microsecond
     where id in (${idList(taken.map((r) => r.id))})`,
    [claim.owner, Math.round(claim.leaseMs) * 1000],
  );
  return taken.map((r) => ({
    id: r.id,
    messageId: r.message_id,
    destination: r.destination,
    type: r.type,
    key: r.key,
    headers: JSON.parse(r.headers) as Record<string, string>,
    payloadJson: r.payload,
    occurredAt: parseUtc(r.occurred_at),
    createdAt: parseUtc(r.created_at),
    attempts: Number(r.attempts),
  }));
}
