import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { infraEnv } from '../../../harness/infra';
import { uniqueName } from '../../../harness/names';

const run = promisify(execFile);

/**
 * The services' permissions, as the recipe of docs/guide/08-redrive.md grants them (`rabbitmqctl set_permissions`):
 * - configure nothing: a service declares, deletes and re-declares nothing (`messaging topology apply`
 *   declares the topology as the admin; the services only check it, passively);
 * - write to the default exchange (dead-letter and retry copies go straight to their queues) and to the
 *   destination exchanges (here: the names without a dot; queue names always have one), never to a queue,
 *   so that no service can unbind a queue either;
 * - read every queue but dead-letter queues (`<destination>.<group>.dlq`) and their archives (`….dlq.archive`):
 *   consume the work queue, never get, consume or purge a DLQ or the record of discarded messages.
 */
export const SERVICE_PERMISSIONS = [
  '^$',
  '^(amq\\.default|[^.]+)$',
  '^(?!.*\\.dlq(\\.archive)?$).*',
] as const;

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
  }
}

async function ctl(...args: string[]): Promise<void> {
  await run('rabbitmqctl', args, { timeout: 30_000 });
}
