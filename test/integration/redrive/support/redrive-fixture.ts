import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EventDefinition, MessagingMetrics } from 'nest-reliable-messaging';
import {
  AdminCredential,
  ApprovedRedrivePlan,
  ApproverKeyring,
  BulkPlanStore,
  generateApproverKeys,
  PostgresRedriveLedger,
  readApproverSigner,
  RedriveBroker,
  RedrivePlan,
  RedriveService,
} from 'nest-reliable-messaging/redrive';
import { parseKeySecret, signApproval } from 'nest-reliable-messaging/testing';
import { LOCAL_KEY_SECRET } from '../../../../tools/infra/local-secrets';
import { createTestSchema, TestSchema } from '../../../harness/postgres';

/** Approvers the fixture's keyring trusts. */
export const APPROVERS = ['jane', 'bob'] as const;
export type Approver = (typeof APPROVERS)[number];

/**
 * What a redrive suite needs besides a broker: an admin database (a schema of its own, the library's
 * migrations run, the ledger), approver key pairs and the reviewed keyring with its identity map (jane and
 * bob approve; each admin principal the suite uses is a person of its own), and `RedriveService`s built like
 * the CLI builds one. Also the same, as files and environment, for the CLI.
 */
export class RedriveFixture {
  readonly keys = Object.fromEntries(APPROVERS.map((name) => [name, generateApproverKeys(name)])) as Record<
    Approver,
    ReturnType<typeof generateApproverKeys>
  >;
  /** The identity map's people besides the approvers: one per admin account. */
  private readonly admins: string[] = [];
  readonly folder = mkdtempSync(path.join(os.tmpdir(), 'redrive-'));
  private readonly services: RedriveService[] = [];

  private constructor(
    readonly schema: TestSchema,
    readonly ledger: PostgresRedriveLedger,
  ) {
    this.writeKeyring();
    for (const name of APPROVERS) {
      writeFileSync(
        path.join(this.folder, `${name}.key.json`),
        JSON.stringify(this.keys[name].privateKeyFile),
        { mode: 0o600 }, // dlq approve refuses a key file others can read
      );
    }
  }

  static async create(prefix: string): Promise<RedriveFixture> {
    const schema = await createTestSchema(`${prefix}_admin`);
    const database = { url: schema.databaseUrl, schema: schema.name };
    await PostgresRedriveLedger.migrate(database);
    return new RedriveFixture(schema, await PostgresRedriveLedger.connect(database));
  }

  /** The reviewed keyring: version 2, the approvers with their keys and the admitted admin accounts. */
  get keyringFile(): unknown {
    return {
      version: 2,
      people: [
        ...APPROVERS.map((name) => ({ name, publicKey: this.keys[name].publicKey.publicKey })),
        ...this.admins.map((account) => ({ name: account, accounts: [] })),
      ],
    };
  }

  /** The keyring as `RedriveService` reads it. */
  get approvers(): ApproverKeyring {
    return ApproverKeyring.parse(this.keyringFile);
  }

  /** Adds each admin account as a person of its own to the identity map (the CLI's file too). */
  admit(...accounts: string[]): void {
    for (const account of accounts) {
      if (this.approvers.personOf(account) === undefined) this.admins.push(account);
    }
    this.writeKeyring();
  }

  /** A service as the CLI builds one: ledger, keyring (its principal admitted), the local key secret. */
  service(
    broker: RedriveBroker,
    credential: AdminCredential | undefined,
    extra: {
      metrics?: MessagingMetrics;
      clock?: { now(): number };
      readBudgetBytes?: number;
      bulkStore?: BulkPlanStore;
      /** The event definitions edits are checked with. */
      events?: readonly EventDefinition[];
      /** The services' `deadLetter.carryHeaders`: the headers an edit may change. */
      carryHeaders?: readonly string[];
    } = {},
  ): RedriveService {
    if (credential) this.admit(credential.principal);
    const service = new RedriveService({
      broker,
      credential,
      ledger: this.ledger,
      approvers: this.approvers,
      keySecret: parseKeySecret(LOCAL_KEY_SECRET, 'LOCAL_KEY_SECRET'),
      ...extra,
    });
    this.services.push(service);
    return service;
  }

  /** `approver` signs `plan` now (or at `at`). */
  approval(plan: RedrivePlan, approver: Approver = 'jane', options: { at?: Date; ttlMs?: number } = {}) {
    const signer = readApproverSigner(this.keys[approver].privateKeyFile);
    return signApproval(plan, signer, { ttlMs: options.ttlMs }, options.at ?? new Date());
  }

  /** `approver` approves `plan` and `service` checks it. */
  approve(
    service: RedriveService,
    plan: RedrivePlan,
    approver: Approver = 'jane',
  ): Promise<ApprovedRedrivePlan> {
    return service.approve(plan, this.approval(plan, approver));
  }

  /** The CLI's environment for the admin database, the keyring and the key secret. */
  get cliEnv(): Record<string, string> {
    return {
      MESSAGING_ADMIN_DATABASE_URL: this.schema.databaseUrl,
      MESSAGING_ADMIN_DATABASE_SCHEMA: this.schema.name,
      MESSAGING_ADMIN_APPROVERS: path.join(this.folder, 'approvers.json'),
      MESSAGING_KEY_SECRET: LOCAL_KEY_SECRET,
      // The fixture's login is the database's superuser, which could rewrite the audit log: accepted here
      // (recorded in each entry); `redrive-overrides.test.ts` runs the recipe's login without it.
      MESSAGING_ADMIN_ALLOW_REWRITABLE_AUDIT: 'true',
    };
  }

  /**
   * The CLI's standard error without the warning its superuser login draws (`--allow-rewritable-audit`,
   * which `cliEnv` gives): what is left is what a command run as the recipe's login would say.
   */
  static withoutRewriteWarning(err: string): string {
    return err.replace(/^WARNING: this admin database login can rewrite the audit log.*\n/m, '');
  }

  /** The audit log. */
  history(source?: string) {
    return this.ledger.history({ source, limit: 1_000 });
  }

  private writeKeyring(): void {
    writeFileSync(path.join(this.folder, 'approvers.json'), JSON.stringify(this.keyringFile));
  }

  async close(): Promise<void> {
    await Promise.all(this.services.map((s) => s.close()));
    await this.ledger.close();
    await this.schema.drop();
    rmSync(this.folder, { recursive: true, force: true });
  }
}
