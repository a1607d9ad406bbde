import { DataSource } from 'typeorm';
import { MessagingAdminMigrations } from '../../migrations';
import { ChainRedriveAudit1764979200000 } from '../../migrations/chain-redrive-audit.migration';
import { PinRedriveKeyring1765238400000 } from '../../migrations/pin-redrive-keyring.migration';
import { PinRedriveTopology1765324800000 } from '../../migrations/pin-redrive-topology.migration';
import { CreateRedriveLedger1764892800000 } from '../../migrations/create-redrive-ledger.migration';
import { pgTimestamp } from '../../common/pg-timestamp';
import { toPostgresText } from '../../common/postgres-text';
import { quoteIdent } from '../../tables/postgres-tables';
import { checkAdminDatabaseUrl } from '../admin-connection';
import { AuditLogRewritableError } from '../errors/audit-log-rewritable.error';
import { RedriveInProgressError } from '../errors/redrive-in-progress.error';
import {
  AUDIT_CHAIN_GENESIS,
  AuditChainBreak,
  AuditChainCheck,
  chainBroken,
  ChainedAuditRow,
  checkAuditChain,
} from './audit-chain';
import {
  ApprovalClaim,
  ApprovalEvidence,
  ApprovalUse,
  AuditOverride,
  RecordedRedriveAuditEntry,
  RedriveAuditEntry,
  RedriveAuditFilter,
  RedriveLedger,
} from './redrive-ledger.interface';
import { AdminDatabaseOptions, checkAdminTables } from './admin-store-connection';

export type { AdminDatabaseOptions } from './admin-store-connection';

interface AuditRow {
  id: string;
  /** A `Date`, or text where the application reads `timestamptz` as text: read through `pgTimestamp`. */
  at: Date | string;
  action: RedriveAuditEntry['action'];
  actor: string;
  transport: RedriveAuditEntry['transport'];
  source: string | null;
  target: string | null;
  plan_hash: string | null;
  approver: string | null;
  redrive_id: string | null;
  message_ids: (string | null)[];
  /** The ids as jsonb text (read for the chain check only). */
  message_id_texts?: (string | null)[] | null;
  outcome: string;
  detail: string | null;
  prev_hash: string | null;
  row_hash: string | null;
  /** The approval's evidence, JSON text (issue 45). */
  evidence?: string | null;
  /** The login that wrote the entry, stamped by the trigger (issue 45). */
  db_user?: string | null;
  /** The overrides the writing run used, comma-separated (issue 45). */
  overrides?: string | null;
}

/** A one-time token found taken inside `claimApproval`'s transaction (rolls it back). */
class TokenTaken extends Error {
  constructor(
    readonly token: string,
    readonly kind: 'nonce' | 'claim',
  ) {
    super(`${kind} taken`);
  }
}

/** How many entries `verifyChain()` reads at a time. */
const VERIFY_PAGE = 1_000;

/**
 * The redrive ledger in PostgreSQL, in tables the library's migrations create (`CreateRedriveLedger…`).
 * The exclusive hold is a session advisory lock on a connection of its own, so a process that dies lets go.
 */
export class PostgresRedriveLedger implements RedriveLedger {
  private readonly audit: string;
  private readonly nonces: string;
  private readonly head: string;
  private readonly keyring: string;
  private readonly topology: string;
  /** The overrides every entry this ledger writes carries (its connection's, its login's). */
  private readonly overrides = new Set<AuditOverride>();

  private constructor(private readonly dataSource: DataSource) {
    const tables = tablesOf(dataSource);
    this.audit = tables.audit;
    this.nonces = tables.nonces;
    this.head = tables.head;
    this.keyring = tables.keyring;
    this.topology = tables.topology;
  }

  /**
   * Connects to the admin database; throws `RedriveLedgerMissingError` when its tables are missing. A URL
   * accepted only with `allowInsecureTransport` makes every entry carry the override `insecure-transport`.
   */
  static async connect(options: AdminDatabaseOptions): Promise<PostgresRedriveLedger> {
    const dataSource = await openAdminDatabase(options);
    const ledger = new PostgresRedriveLedger(dataSource);
    if (checkAdminDatabaseUrl(options.url, options.allowInsecureTransport)) {
      ledger.overrides.add('insecure-transport');
    }
    try {
      await ledger.checkTables();
    } catch (error) {
      await dataSource.destroy();
      throw error;
    }
    return ledger;
  }

  /** Runs the library's migrations on the admin database (`nest-messaging db migrate`). Returns their names. */
  static async migrate(options: AdminDatabaseOptions): Promise<string[]> {
    const dataSource = await openAdminDatabase(options);
    try {
      return (await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name);
    } finally {
      await dataSource.destroy();
    }
  }

  /** The database time of the first APPROVE entry whose evidence names `nonce` (issue 45, finding 14). */
  async approvalRecordedAt(nonce: string): Promise<Date | undefined> {
    // The evidence is JSON text as evidenceText() writes it; a planted row that is not JSON fails no query.
    const rows = await this.dataSource.query<{ at: Date | string; evidence: string }[]>(
      `select at, evidence from ${this.audit}
       where action = 'APPROVE' and evidence is not null and strpos(evidence, $1) > 0 order by id`,
      [`"nonce":${JSON.stringify(nonce)}`],
    );
    for (const row of rows) {
      if (parseEvidence(row.evidence)?.nonce === nonce) return pgTimestamp(row.at);
    }
    return undefined;
  }

  /** Appends an entry to `messaging_redrive_audit` (its id, time and place in the chain are the database's). */
  async record(entry: RedriveAuditEntry): Promise<void> {
    await this.insertEntry(this.dataSource, entry);
  }

  private async insertEntry(db: Pick<DataSource, 'query'>, entry: RedriveAuditEntry): Promise<void> {
    const overrides = [...new Set([...(entry.overrides ?? []), ...this.overrides])].sort();
    await db.query(
      `insert into ${this.audit} (action, actor, transport, source, target, plan_hash, approver, redrive_id,
         message_ids, outcome, detail, evidence, overrides)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, $13)`,
      [
        entry.action,
        entry.actor,
        entry.transport,
        entry.source ?? null,
        entry.target ?? null,
        entry.planHash ?? null,
        entry.approver ?? null,
        entry.redriveId ?? null,
        JSON.stringify((entry.messageIds ?? []).map((id) => id && toPostgresText(id))),
        entry.outcome,
        entry.detail ? toPostgresText(entry.detail) : null,
        entry.evidence ? evidenceText(entry.evidence) : null,
        overrides.length > 0 ? overrides.join(',') : null,
      ],
    );
  }

  /**
   * Inserts the approval's nonce, and each of `use.claims`, into `messaging_redrive_nonce`; when one is there
   * already, inserts nothing and resolves `claimed: false` with who took it, when, and which.
   */
  async claimApproval(use: ApprovalUse, started?: RedriveAuditEntry): Promise<ApprovalClaim> {
    const tokens: Array<[token: string, taken: 'nonce' | 'claim']> = [
      [use.nonce, 'nonce'],
      ...(use.claims ?? []).map((claim): [string, 'claim'] => [claim, 'claim']),
    ];
    // One transaction: no nonce (and so no move) without its STARTED entry in the chain (issue 45, item 6),
    // and an edit's claim with its nonce: a token taken before rolls back the others.
    const taken = await this.dataSource
      .transaction(async (manager) => {
        for (const [token, kind] of tokens) {
          const inserted = await manager.query<unknown[]>(
            `insert into ${this.nonces} (nonce, plan_hash, approver, redrive_id, executed_by)
             values ($1, $2, $3, $4, $5) on conflict (nonce) do nothing returning nonce`,
            [token, use.planHash, use.approver, use.redriveId, use.executedBy],
          );
          if (inserted.length !== 1) throw new TokenTaken(token, kind);
        }
        if (started) await this.insertEntry(manager, started);
        return undefined;
      })
      .catch((error: unknown) => {
        if (error instanceof TokenTaken) return error;
        throw error;
      });
    if (!taken) return { claimed: true };
    const [earlier] = await this.dataSource.query<Array<{ executed_by: string; used_at: Date | string }>>(
      `select executed_by, used_at from ${this.nonces} where nonce = $1`,
      [taken.token],
    );
    return {
      claimed: false,
      usedBy: earlier
        ? `${earlier.executed_by} at ${pgTimestamp(earlier.used_at).toISOString()}`
        : 'another execution',
      taken: taken.kind,
    };
  }

  /**
   * Runs `work` holding a session advisory lock on `transport` and `source`, on a connection of its own;
   * throws `RedriveInProgressError` at once when another session holds it.
   */
  async withExclusiveHold<T>(
    transport: 'kafka' | 'rabbitmq',
    source: string,
    work: () => Promise<T>,
  ): Promise<T> {
    const lock = `nest-reliable-messaging:redrive:${transport}:${source}`;
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ held }] = (await runner.query('select pg_try_advisory_lock(hashtextextended($1, 0)) as held', [
        lock,
      ])) as Array<{ held: boolean }>;
      if (!held) throw new RedriveInProgressError(source);
      try {
        return await work();
      } finally {
        await runner
          .query('select pg_advisory_unlock(hashtextextended($1, 0))', [lock])
          .catch(() => undefined);
      }
    } finally {
      await runner.release();
    }
  }

  /** The fingerprint `messaging_redrive_keyring` pins, or undefined when none is pinned. */
  pinnedKeyring(): Promise<string | undefined> {
    return this.pinnedIn(this.keyring);
  }

  /** The fingerprint `messaging_redrive_topology` pins, or undefined when none is pinned. */
  pinnedTopology(): Promise<string | undefined> {
    return this.pinnedIn(this.topology);
  }

  /**
   * Pins `fingerprint` (an `ApproverKeyring.fingerprint`) as the reviewed keyring, replacing the pin before:
   * run as the tables' owner (`nest-messaging db pin-keyring`); the everyday logins may only read it.
   */
  static pinKeyring(options: AdminDatabaseOptions, fingerprint: string): Promise<void> {
    return PostgresRedriveLedger.pin(options, 'keyring', fingerprint);
  }

  /**
   * Pins `fingerprint` (`topologyFingerprint()` of the reviewed topology) as the topology routes come from,
   * replacing the pin before: run as the tables' owner (`nest-messaging db pin-topology`).
   */
  static pinTopology(options: AdminDatabaseOptions, fingerprint: string): Promise<void> {
    return PostgresRedriveLedger.pin(options, 'topology', fingerprint);
  }

  private async pinnedIn(table: string): Promise<string | undefined> {
    const [row] = await this.dataSource.query<Array<{ fingerprint: string }>>(
      `select fingerprint from ${table} where id = 1`,
    );
    return row?.fingerprint;
  }

  private static async pin(
    options: AdminDatabaseOptions,
    what: 'keyring' | 'topology',
    fingerprint: string,
  ): Promise<void> {
    const dataSource = await openAdminDatabase(options);
    try {
      await dataSource.query(
        `insert into ${tablesOf(dataSource)[what]} (id, fingerprint) values (1, $1)
         on conflict (id) do update set fingerprint = excluded.fingerprint, pinned_at = now()`,
        [fingerprint],
      );
    } finally {
      await dataSource.destroy();
    }
  }

  /**
   * Refuses (`AuditLogRewritableError`) when this login can rewrite the audit log (`rewriteRights()` is not
   * empty), unless `allow`: then every entry written from now on carries the override `rewrite-rights`.
   * Resolves with the rights found (empty for the guide's recipe), for the caller's loud warning.
   */
  async requireAppendOnly(allow: boolean): Promise<string[]> {
    const rights = await this.rewriteRights();
    if (rights.length === 0) return rights;
    if (!allow) throw new AuditLogRewritableError(rights);
    this.overrides.add('rewrite-rights');
    return rights;
  }

  /** The actor of the first PLAN entry with outcome PLANNED for `planHash`, if any. */
  async plannerOf(planHash: string): Promise<string | undefined> {
    const [row] = await this.dataSource.query<Array<{ actor: string }>>(
      `select actor from ${this.audit}
       where plan_hash = $1 and action = 'PLAN' and outcome = 'PLANNED' order by id limit 1`,
      [planHash],
    );
    return row?.actor;
  }

  /** The latest `limit` audit entries that match `filter`, newest last (see `RedriveAuditFilter`). */
  async history(filter: RedriveAuditFilter): Promise<RecordedRedriveAuditEntry[]> {
    // Keyset paging on the id: every filter a condition, every value a parameter.
    const newer = filter.after !== undefined;
    const rows = await this.dataSource.query<AuditRow[]>(
      `select * from (
         select * from ${this.audit}
         where ($1::text is null or source = $1) and ($2::text is null or actor = $2)
           and ($3::text is null or action = $3) and ($4::timestamptz is null or at >= $4)
           and ($5::timestamptz is null or at < $5) and ($6::bigint is null or id < $6)
           and ($7::bigint is null or id > $7)
         order by id ${newer ? 'asc' : 'desc'} limit $8
       ) page order by id`,
      [
        filter.source ?? null,
        filter.actor ?? null,
        filter.action ?? null,
        filter.from ?? null,
        filter.to ?? null,
        idParam(filter.before),
        idParam(filter.after),
        filter.limit,
      ],
    );
    return rows.map((row) => ({
      id: String(row.id),
      at: pgTimestamp(row.at),
      action: row.action,
      actor: row.actor,
      transport: row.transport,
      source: row.source ?? undefined,
      target: row.target ?? undefined,
      planHash: row.plan_hash ?? undefined,
      approver: row.approver ?? undefined,
      redriveId: row.redrive_id ?? undefined,
      messageIds: row.message_ids,
      outcome: row.outcome,
      detail: row.detail ?? undefined,
      ...(row.evidence ? { evidence: parseEvidence(row.evidence) } : {}),
      hash: row.row_hash ?? undefined,
      ...(row.db_user ? { dbUser: row.db_user } : {}),
      ...(row.overrides ? { overrides: overridesOf(row.overrides) } : {}),
    }));
  }

  /**
   * Recomputes the audit log's hash chain: every entry (or the latest `last` and the one before them) must
   * carry the hash of its fields and of the entry before it, and the last one the head's. A break means
   * entries were changed, removed or reordered by someone who could switch the triggers off (the owner, a
   * superuser): see `AuditChainCheck`.
   */
  async verifyChain(options: { readonly last?: number } = {}): Promise<AuditChainCheck> {
    const [head] = await this.dataSource.query<Array<{ last_id: string; last_hash: string }>>(
      `select last_id, last_hash from ${this.head} where id = 1`,
    );
    if (!head) return chainBroken(0, [{ entry: 'head', reason: 'the chain has no head' }]);
    const until = { id: String(head.last_id), hash: head.last_hash };
    if (options.last !== undefined) {
      const rows = await this.dataSource.query<AuditRow[]>(
        `select * from (select *, case when jsonb_typeof(message_ids) = 'array' then array(select e.v from jsonb_array_elements_text(message_ids) with ordinality e(v, n) order by e.n) end as message_id_texts from ${this.audit} where id <= $1 order by id desc limit $2) w order by id`,
        [until.id, options.last + 1],
      );
      const first = rows[0];
      const window = rows.length > options.last ? rows.slice(1) : rows;
      const before = rows.length > options.last ? (first?.row_hash ?? undefined) : AUDIT_CHAIN_GENESIS;
      return checkAuditChain(window.map(chained), before ?? undefined, until);
    }
    let checked = 0;
    let previous: string | undefined = AUDIT_CHAIN_GENESIS;
    let after = '0';
    const breaks: AuditChainBreak[] = [];
    for (;;) {
      const rows = await this.dataSource.query<AuditRow[]>(
        `select *, case when jsonb_typeof(message_ids) = 'array' then array(select e.v from jsonb_array_elements_text(message_ids) with ordinality e(v, n) order by e.n) end as message_id_texts from ${this.audit} where id > $1 and id <= $2 order by id limit ${VERIFY_PAGE}`,
        [after, until.id],
      );
      const done = rows.length < VERIFY_PAGE;
      const result = checkAuditChain(rows.map(chained), previous, done ? until : undefined);
      if (!result.intact) breaks.push(...result.breaks);
      checked += rows.length;
      if (done) return breaks.length > 0 ? chainBroken(checked, breaks) : { ...result, checked };
      previous = rows[rows.length - 1].row_hash ?? undefined;
      after = String(rows[rows.length - 1].id);
    }
  }

  /**
   * What lets this login rewrite the audit log despite the triggers, e.g. `owner of …` or `superuser`:
   * empty for a role with SELECT and INSERT only (the guide's recipe). Membership of the owner role counts
   * even without INHERIT (such a member may `SET ROLE` to it), and so do UPDATE, DELETE, TRUNCATE and TRIGGER
   * on the audit table, its nonce table and its chain head (issue 45, finding 15). `requireAppendOnly()`
   * refuses such a login (the console at start, the CLI's redrive commands); `dlq history --verify` warns.
   */
  async rewriteRights(): Promise<string[]> {
    const rows = await this.dataSource.query<
      Array<{
        name: string;
        superuser: boolean;
        owner: boolean;
        update: boolean;
        delete: boolean;
        truncate: boolean;
        trigger: boolean;
      }>
    >(
      `select t.name, r.rolsuper as superuser, pg_has_role(current_user, c.relowner, 'MEMBER') as owner,
              has_table_privilege(c.oid, 'UPDATE') as update, has_table_privilege(c.oid, 'DELETE') as delete,
              has_table_privilege(c.oid, 'TRUNCATE') as truncate, has_table_privilege(c.oid, 'TRIGGER') as trigger
       from unnest($1::text[]) with ordinality t(name, n)
       join pg_class c on c.oid = to_regclass(t.name)
       join pg_roles r on r.rolname = current_user
       order by t.n`,
      [[this.audit, this.nonces, this.head]],
    );
    if (rows.some((row) => row.superuser)) return ['superuser'];
    const rights: string[] = [];
    for (const row of rows) {
      if (row.owner) {
        rights.push(`owner of ${row.name}`);
        continue;
      }
      for (const privilege of ['update', 'delete', 'truncate', 'trigger'] as const) {
        if (row[privilege])
          rights.push(
            row.name === this.audit ? privilege.toUpperCase() : `${privilege.toUpperCase()} on ${row.name}`,
          );
      }
    }
    return rights;
  }

  /** Closes the connections to the admin database. */
  async close(): Promise<void> {
    await this.dataSource.destroy();
  }

  private checkTables(): Promise<void> {
    return checkAdminTables(this.dataSource, [
      [this.audit, CreateRedriveLedger1764892800000.name],
      [this.nonces, CreateRedriveLedger1764892800000.name],
      [this.head, ChainRedriveAudit1764979200000.name],
      [this.keyring, PinRedriveKeyring1765238400000.name],
      [this.topology, PinRedriveTopology1765324800000.name],
    ]);
  }
}

/** The ledger's tables, schema-qualified when the DataSource names a schema. */
function tablesOf(dataSource: DataSource) {
  const schema = (dataSource.options as { schema?: string }).schema;
  const prefix = schema ? `${quoteIdent(schema)}.` : '';
  return {
    schema,
    audit: `${prefix}messaging_redrive_audit`,
    nonces: `${prefix}messaging_redrive_nonce`,
    head: `${prefix}messaging_redrive_audit_head`,
    keyring: `${prefix}messaging_redrive_keyring`,
    topology: `${prefix}messaging_redrive_topology`,
  };
}

/** An entry id as a query parameter: digits only, else none (a page link typed by hand). */
function idParam(id: string | undefined): string | null {
  return id !== undefined && /^\d{1,19}$/.test(id) ? id : null;
}

function chained(row: AuditRow): ChainedAuditRow {
  return {
    id: String(row.id),
    at: pgTimestamp(row.at),
    action: row.action,
    actor: row.actor,
    transport: row.transport,
    source: row.source,
    target: row.target,
    planHash: row.plan_hash,
    approver: row.approver,
    redriveId: row.redrive_id,
    // The ids as the database's trigger hashed them (jsonb's text of each element): a non-string id (e.g.
    // `[1,2]` or `1.50`, inserted by hand) hashes alike on both sides, not as a false break (issue 45 item 2).
    messageIds: row.message_id_texts ?? row.message_ids,
    outcome: row.outcome,
    detail: row.detail,
    evidence: row.evidence ?? null,
    dbUser: row.db_user ?? null,
    overrides: row.overrides ?? null,
    prevHash: row.prev_hash,
    rowHash: row.row_hash,
  };
}

/** Stored overrides read back: the known ones, in their order (text typed by hand keeps its words). */
function overridesOf(text: string): AuditOverride[] {
  return text.split(',').filter(Boolean) as AuditOverride[];
}

/** The evidence as stored: JSON with its fields in one order, undefined ones left out (hashed as written). */
function evidenceText(evidence: ApprovalEvidence): string {
  const { nonce, signature, approvedAt, expiresAt, keyId, keyring } = evidence;
  return JSON.stringify({ nonce, signature, approvedAt, expiresAt, keyId, keyring });
}

/** Stored evidence read back; text that is not a JSON object (inserted by hand) reads as none. */
function parseEvidence(text: string): ApprovalEvidence | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const v = value as Record<string, unknown>;
    const str = (x: unknown) => (typeof x === 'string' ? x : undefined);
    return {
      nonce: str(v.nonce) ?? '',
      signature: str(v.signature) ?? '',
      approvedAt: str(v.approvedAt) ?? '',
      expiresAt: str(v.expiresAt) ?? '',
      ...(str(v.keyId) ? { keyId: str(v.keyId) } : {}),
      ...(str(v.keyring) ? { keyring: str(v.keyring) } : {}),
    };
  } catch {
    return undefined;
  }
}

async function openAdminDatabase(options: AdminDatabaseOptions): Promise<DataSource> {
  checkAdminDatabaseUrl(options.url, options.allowInsecureTransport);
  const dataSource = new DataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    migrations: MessagingAdminMigrations,
    logging: false,
    // A session that holds the audit chain's head (an open transaction after an insert) makes the next
    // insert wait: at most 10 s, then it fails (and an execution moves nothing) instead of hanging.
    extra: { max: 3, options: '-c lock_timeout=10000' },
  });
  await dataSource.initialize();
  return dataSource;
}
