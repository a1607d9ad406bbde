import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { infraEnv } from '../../../harness/infra';
import { uniqueName } from '../../../harness/names';

/** A login of the admin database. */
export interface DatabaseLogin {
  readonly role: string;
  readonly password: string;
  /** The database URL as this login. */
  readonly url: string;
}

/**
 * The guide's recipe for the admin database's roles (docs: "Permissions, the admin database"), with names
 * of the suite's own: as a superuser, an owner role that runs `nest-messaging db migrate`, a role for the
 * CLI and the console, and a schema the owner owns (`create()`); then, as the owner, `db migrate` (the suite
 * runs it through the CLI) and the grants (`grant()`). `drop()` removes all of it.
 */
export class AdminDatabaseRoles {
  /** The logins of `person()`, dropped with the rest. */
  private readonly people: DatabaseLogin[] = [];

  private constructor(
    readonly schema: string,
    readonly owner: DatabaseLogin,
    readonly redrive: DatabaseLogin,
  ) {}

  /**
   * The guide's recipe for a login of one's own (issue 45, item 6): a login role per person and one for the
   * console, each a member of the everyday role (`redrive`, used as a group: its grants, nobody else's
   * sessions), its idle transactions ended after `idleMs`. Names unique to the run.
   */
  async person(name: string, idleMs = 5_000): Promise<DatabaseLogin> {
    const password = randomBytes(12).toString('hex');
    const role = uniqueName(`${this.schema}_${name}`).slice(0, 63);
    const url = new URL(infraEnv().databaseUrl);
    url.username = role;
    url.password = password;
    await asSuperuser(async (db) => {
      await db.query(`create role ${role} login password '${password}' in role ${this.redrive.role}`);
      await db.query(`alter role ${role} set idle_in_transaction_session_timeout = ${idleMs}`);
    });
    const login = { role, password, url: url.toString() };
    this.people.push(login);
    return login;
  }

  static async create(prefix: string): Promise<AdminDatabaseRoles> {
    const login = (role: string): DatabaseLogin => {
      const password = randomBytes(12).toString('hex');
      const url = new URL(infraEnv().databaseUrl);
      url.username = role;
      url.password = password;
      return { role, password, url: url.toString() };
    };
    const roles = new AdminDatabaseRoles(
      uniqueName(`${prefix}_admin`),
      login(uniqueName(`${prefix}_owner`)),
      login(uniqueName(`${prefix}_redrive`)),
    );
    await asSuperuser(async (db) => {
      // The recipe, as a superuser (or the database's owner), once:
      await db.query(`create role ${roles.owner.role} login password '${roles.owner.password}'`);
      await db.query(`create role ${roles.redrive.role} login password '${roles.redrive.password}'`);
      await db.query(`create schema ${roles.schema} authorization ${roles.owner.role}`);
    });
    return roles;
  }

  /**
   * The recipe's grants, as the owner after `db migrate`: read and append the ledger, nothing else; read,
   * add and step the console's plans.
   */
  async grant(): Promise<void> {
    const owner = await this.connect(this.owner);
    try {
      const [s, r] = [this.schema, this.redrive.role];
      await owner.query(`grant usage on schema ${s} to ${r}`);
      await owner.query(
        `grant select, insert on ${s}.messaging_redrive_audit, ${s}.messaging_redrive_nonce to ${r}`,
      );
      await owner.query(`grant select on ${s}.messaging_redrive_audit_head to ${r}`);
      // The pinned keyring and topology (issue 45): read them, never write them.
      await owner.query(
        `grant select on ${s}.messaging_redrive_keyring, ${s}.messaging_redrive_topology to ${r}`,
      );
      // The console's plans: read, add, and change what a step changes, nothing else.
      await owner.query(`grant select, insert on ${s}.messaging_console_plan to ${r}`);
      await owner.query(
        `grant update (approval, result, executed_at, stale_at, refusals) on ${s}.messaging_console_plan to ${r}`,
      );
    } finally {
      await owner.end();
    }
  }

  /** The CLI's environment for the admin database as `login`. */
  env(login: DatabaseLogin): Record<string, string> {
    return { MESSAGING_ADMIN_DATABASE_URL: login.url, MESSAGING_ADMIN_DATABASE_SCHEMA: this.schema };
  }

  /** A client as `login`, its search_path the schema. Closed by the caller. */
  async connect(login: DatabaseLogin | 'superuser'): Promise<Client> {
    const url = login === 'superuser' ? infraEnv().databaseUrl : login.url;
    const client = new Client({ connectionString: url, options: `-c search_path=${this.schema}` });
    await client.connect();
    return client;
  }

  async drop(): Promise<void> {
    await asSuperuser(async (db) => {
      await db.query(`drop schema if exists ${this.schema} cascade`);
      for (const role of [...this.people.map((p) => p.role), this.redrive.role, this.owner.role]) {
        await db.query(`drop owned by ${role}`).catch(() => undefined);
        await db.query(`drop role if exists ${role}`);
      }
    });
  }
}

async function asSuperuser(work: (db: Client) => Promise<void>): Promise<void> {
  const db = new Client({ connectionString: infraEnv().databaseUrl });
  await db.connect();
  try {
    await work(db);
  } finally {
    await db.end();
  }
}
