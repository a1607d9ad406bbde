import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { infraEnv } from '../../../harness/infra';
import { uniqueName } from '../../../harness/names';

const run = promisify(execFile);

/**
 * The permissions of the suites' one service user, shaped as the recipe of docs/guide/08-redrive.md grants
 * them (`rabbitmqctl set_permissions`; `servicePermissions` writes the recipe itself for one service):
 * - configure nothing: a service declares, deletes and re-declares nothing (`messaging topology apply`
 *   declares the topology as the admin; the services only check it, passively);
 * - write to the destination exchanges (here: the names without a dot; queue names always have one) and to
 *   the groups' failure exchanges (`<destination>.<group>.failures`, through which the dead-letter and retry
 *   copies go; here every group's, as the suites' groups have made-up names), never to a queue, so that no
 *   service can unbind a queue either, and not to the default exchange, which reaches every queue;
 * - read every queue but dead-letter queues (`<destination>.<group>.dlq`) and their archives (`….dlq.archive`):
 *   consume the work queue, never get, consume or purge a DLQ or the record of discarded messages.
 */
export const SERVICE_PERMISSIONS = [
  '^$',
  '^([^.]+|.+\\.failures)$',
  '^(?!.*\\.dlq(\\.archive)?$).*',
] as const;

/** What one service does: the destinations it publishes to, and those it consumes in which group. */
export interface ServiceRoles {
  readonly publishes: readonly string[];
  readonly consumes: ReadonlyArray<{ readonly destination: string; readonly group: string }>;
}

/**
 * One service's permissions, exactly as the recipe of docs/guide/08-redrive.md writes them: configure nothing;
 * write only its destination exchanges and its groups' failure exchanges; read only its work queues.
 */
export function servicePermissions(roles: ServiceRoles): [string, string, string] {
  const escape = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const alternatives = (names: readonly string[]) => `^(${names.map(escape).join('|')})$`;
  return [
    '^$',
    alternatives([
      ...roles.publishes,
      ...roles.consumes.map(({ destination, group }) => `${destination}.${group}.failures`),
    ]),
    alternatives(roles.consumes.map(({ destination, group }) => `${destination}.${group}`)),
  ];
}

/** A RabbitMQ user of a test vhost. */
export interface VhostUser {
  readonly name: string;
  readonly password: string;
}

/**
 * A virtual host of one suite's own on the shared node, with two users made by `rabbitmqctl`: a service
 * user (`SERVICE_PERMISSIONS`: what the applications run as) and an admin user (everything: what
 * `messaging topology apply` and the redrive CLI run as). `delete()` removes the vhost and users.
 */
export class RabbitVhost {
  private readonly extraUsers: string[] = [];

  private constructor(
    readonly name: string,
    readonly service: VhostUser,
    readonly admin: VhostUser,
  ) {}

  static async create(prefix: string): Promise<RabbitVhost> {
    const name = uniqueName(prefix);
    const user = (role: string) => ({ name: `${name}_${role}`, password: randomBytes(12).toString('hex') });
    const vhost = new RabbitVhost(name, user('service'), user('admin'));
    try {
      await ctl('add_vhost', name);
      await ctl('add_user', vhost.service.name, vhost.service.password);
      await ctl('set_permissions', '-p', name, vhost.service.name, ...SERVICE_PERMISSIONS);
      await ctl('add_user', vhost.admin.name, vhost.admin.password);
      await ctl('set_permissions', '-p', name, vhost.admin.name, '.*', '.*', '.*');
    } catch (error) {
      await vhost.delete();
      throw error;
    }
    return vhost;
  }

  /** Adds a user with `permissions` (configure, write, read) on the vhost; `delete()` removes it. */
  async addUser(role: string, permissions: readonly [string, string, string]): Promise<VhostUser> {
    const user = { name: `${this.name}_${role}`, password: randomBytes(12).toString('hex') };
    this.extraUsers.push(user.name);
    await ctl('add_user', user.name, user.password);
    await ctl('set_permissions', '-p', this.name, user.name, ...permissions);
    return user;
  }

  /** Replaces a user's permissions on the vhost (connections opened before keep what they had checked). */
  async setPermissions(user: VhostUser, permissions: readonly [string, string, string]): Promise<void> {
    await ctl('set_permissions', '-p', this.name, user.name, ...permissions);
  }

  /** The vhost's URL without a user (the redrive service adds the admin credential). */
  get url(): string {
    const base = new URL(infraEnv().amqpUrl);
    base.username = '';
    base.password = '';
    base.pathname = `/${this.name}`;
    return base.toString();
  }

  /** The vhost's URL as `user`. */
  urlAs(user: VhostUser): string {
    const url = new URL(this.url);
    url.username = user.name;
    url.password = user.password;
    return url.toString();
  }

  async delete(): Promise<void> {
    await ctl('delete_vhost', this.name).catch(() => undefined);
    await ctl('delete_user', this.service.name).catch(() => undefined);
    await ctl('delete_user', this.admin.name).catch(() => undefined);
    for (const user of this.extraUsers) await ctl('delete_user', user).catch(() => undefined);
  }
}

async function ctl(...args: string[]): Promise<void> {
  await run('rabbitmqctl', args, { timeout: 30_000 });
}
