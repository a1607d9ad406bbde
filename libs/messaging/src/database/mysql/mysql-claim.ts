import { QueryRunner } from 'typeorm';
import { claimedRows, ClaimedRows } from '../../outbox/outbox-store';
import { isStarved } from '../claim-window';
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
 * The claim, inside the caller's READ COMMITTED transaction:
 * 1. pick the first `limit` claimable rows in id order, `FOR UPDATE SKIP LOCKED` (rows a concurrent claim
 *    or an uncommitted insert holds are passed over, not waited for), through `(sent_at, id)`: the pending
 *    rows are the `sent_at is null` prefix of that index, so sent rows are never read;
 * 2. per key of the picked rows, the first pending row left out of the claim (`gap`): one probe of the
 *    `(destination, key_hash, sent_at, id)` index per key, in one statement over a `JSON_TABLE` of the keys;
 *    only the rows before their key's gap are kept;
 * 3. when that left a full window less than half used (`isStarved`), pick a second window past the first,
 *    skipping keys whose first pending row can go neither now nor with this owner (one more probe per row),
 *    and check the order of both windows' rows again;
 * 4. lease the rows kept.
 */
export async function claimMysqlRows(
  queryRunner: QueryRunner,
  table: string,
  claim: MysqlClaim,
): Promise<ClaimedRows> {
  let picked = await pickRows(queryRunner, table, claim, claim.inFlight);
  if (picked.length === 0) return claimedRows([], false);
  let windowFull = picked.length >= claim.limit;
  let taken = await keepKeyOrder(queryRunner, table, picked, claim.inFlight);
  if (isStarved(picked.length, taken.length, claim.limit)) {
    const moreLimit = claim.limit - taken.length;
    const more = await pickRows(
      queryRunner,
      table,
      { ...claim, limit: moreLimit },
      [...claim.inFlight, ...picked.map((r) => r.id)],
      picked[picked.length - 1].id,
    );
    windowFull = more.length >= moreLimit;
    if (more.length > 0) {
      picked = [...picked, ...more];
      taken = await keepKeyOrder(queryRunner, table, picked, claim.inFlight);
    }
  }
  if (taken.length === 0) return claimedRows([], windowFull);

  await queryRunner.query(
    `update ${table} set locked_by = ?, locked_until = utc_timestamp(6) + interval ? microsecond
     where id in (${idList(taken.map((r) => r.id))})`,
    [claim.owner, Math.round(claim.leaseMs) * 1000],
  );
  const rows = taken.map((r) => ({
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
  return claimedRows(rows, windowFull);
}

/** A picked row, its id as text. */
type PickedRow = PickedRecord & { id: string };

/**
 * The first `claim.limit` claimable rows in id order, none of `excluded`; with `after`, only rows past it
 * whose key's first pending row is claimable or this owner's.
 */
async function pickRows(
  queryRunner: QueryRunner,
  table: string,
  claim: MysqlClaim,
  excluded: readonly string[],
  after?: string,
): Promise<PickedRow[]> {
  const now = 'utc_timestamp(6)';
  const claimable = (r: string) =>
    `${r}.available_at <= ${now} and (${r}.locked_until is null or ${r}.locked_until <= ${now})`;
  const conditions = [`p.sent_at is null`, claimable('p')];
  const params: unknown[] = [];
  if (excluded.length > 0) conditions.push(`p.id not in (${idList(excluded)})`);
  if (after !== undefined) {
    conditions.push(
      `p.id > ${idList([after])}`,
      `(select ${claimable('h')} or h.locked_by = ? from ${table} h
        where h.destination = p.destination and h.key_hash = p.key_hash and h.\`key\` = p.\`key\`
          and h.sent_at is null
        order by h.id limit 1)`,
    );
    params.push(claim.owner);
  }
  // The planner would rather walk the primary key in id order, through every sent row: the hint keeps it
  // on the pending prefix.
  const records = (await queryRunner.query(
    `select p.id, p.message_id, p.destination, p.type, p.\`key\`,
            cast(p.headers as char) as headers, cast(p.payload as char) as payload,
            date_format(p.occurred_at, ${UTC_ISO}) as occurred_at,
            date_format(p.created_at, ${UTC_ISO}) as created_at, p.attempts
     from ${table} p force index (messaging_outbox_pending_idx)
     where ${conditions.join(' and ')}
     order by p.id limit ?
     for update skip locked`,
    [...params, claim.limit],
  )) as PickedRecord[];
  return records.map((r) => ({ ...r, id: String(r.id) }));
}

/** The picked rows that come before their key's first pending row left out (neither picked nor in flight). */
async function keepKeyOrder(
  queryRunner: QueryRunner,
  table: string,
  picked: readonly PickedRow[],
  inFlight: readonly string[],
): Promise<PickedRow[]> {
  const keyOf = (r: { destination: string; key: string }) => JSON.stringify([r.destination, r.key]);
  const keys = [...new Set(picked.map(keyOf))];
  const excluded = idList([...picked.map((r) => r.id), ...inFlight]);
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
  return picked.filter((r) => {
    const gap = gapOf.get(keyOf(r));
    return gap === undefined || BigInt(r.id) < gap;
  });
}
