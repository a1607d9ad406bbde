import * as amqp from 'amqplib';
import { RedriveService } from 'nest-reliable-messaging/redrive';
import { uniqueName } from '../../../harness/names';
import { declareGroupQueues } from './parked-messages';
import { RabbitVhost } from './rabbit-vhost';
import { RedriveFixture } from './redrive-fixture';

/** A RabbitMQ redrive suite's resources (they exist only inside tests and hooks). */
export interface RabbitRedriveSuite {
  /** The admin database, the approvers' keys and the keyring. */
  readonly fixture: RedriveFixture;
  /** A vhost of the suite's own on the shared node. */
  readonly vhost: RabbitVhost;
  /** A connection as the vhost's admin user. */
  readonly connection: amqp.ChannelModel;
  /** A `RedriveService` as the vhost's admin user. */
  readonly redrive: RedriveService;
}

/** A consumer group's queues: `<destination>.billing` and its dead-letter queue. */
export interface GroupQueues {
  readonly destination: string;
  readonly workQueue: string;
  readonly dlq: string;
}

/**
 * Registers the suite's `beforeAll`/`afterAll`: a `RedriveFixture` and a vhost named after `name`, a
 * connection and a `RedriveService` as the vhost's admin; afterwards all of it closed and deleted.
 */
export function useRabbitRedriveSuite(name: string): RabbitRedriveSuite {
  let made: RabbitRedriveSuite | undefined;
  let fixture: RedriveFixture | undefined;
  let vhost: RabbitVhost | undefined;
  let connection: amqp.ChannelModel | undefined;
  beforeAll(async () => {
    fixture = await RedriveFixture.create(name);
    vhost = await RabbitVhost.create(name);
    connection = await amqp.connect(vhost.urlAs(vhost.admin));
    const redrive = fixture.service(
      { kind: 'rabbitmq', url: vhost.url },
      { principal: vhost.admin.name, secret: vhost.admin.password },
    );
    made = { fixture, vhost, connection, redrive };
  });
  afterAll(async () => {
    await fixture?.close();
    await connection?.close().catch(() => undefined);
    await vhost?.delete();
  });
  const get = (): RabbitRedriveSuite => {
    if (!made) throw new Error('The suite’s resources exist only inside tests and hooks');
    return made;
  };
  return {
    get fixture() {
      return get().fixture;
    },
    get vhost() {
      return get().vhost;
    },
    get connection() {
      return get().connection;
    },
    get redrive() {
      return get().redrive;
    },
  };
}

/**
 * Declares a new group's queues (`<prefix>-…`, group `billing`), as the RabbitMQ subscriber does; with
 * `quorum`, both as quorum queues.
 */
export async function newGroupQueues(
  connection: amqp.ChannelModel,
  prefix: string,
  quorum = false,
): Promise<GroupQueues> {
  const destination = uniqueName(prefix);
  const workQueue = `${destination}.billing`;
  await declareGroupQueues(connection, workQueue, quorum ? { 'x-queue-type': 'quorum' } : undefined);
  return { destination, workQueue, dlq: `${workQueue}.dlq` };
}
