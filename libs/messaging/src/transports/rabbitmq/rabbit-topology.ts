import * as amqp from 'amqplib';
import { destinationNames } from '../../dead-letter/destination-names';
import { GroupTopology, MessagingTopology, destinationsOf } from '../../topology/messaging-topology';
import { TopologyMode } from '../../messaging-options.interface';

/** AMQP reply code for NOT_FOUND (a passive declare of something that does not exist). */
const NOT_FOUND = 404;

/**
 * Makes sure the exchanges a publisher uses exist, once per channel: declares them (`declare` mode) or only
 * checks them passively (`verify`: a missing one closes the channel, and the publish fails).
 */
export class RabbitTopology {
  private readonly known = new Set<string>();

  constructor(
    private readonly channel: amqp.Channel,
    private readonly mode: TopologyMode,
  ) {}

  /** A durable topic exchange per destination; routing keys are event types. */
  async exchanges(names: readonly string[]): Promise<void> {
    for (const name of names) {
      if (this.known.has(name)) continue;
      if (this.mode === 'declare') await this.channel.assertExchange(name, 'topic', { durable: true });
      else await this.channel.checkExchange(name);
      this.known.add(name);
    }
  }
}

/**
 * Declares the topology (idempotent): per destination a durable topic exchange; per group its work queue bound
 * with `#`, its dead-letter queue, and one retry queue per delay tier whose `x-message-ttl` dead-letters back to
 * the work queue (one queue per delay: TTLs expire at the head).
 */
export async function declareRabbitTopology(
  channel: amqp.Channel,
  topology: MessagingTopology,
): Promise<void> {
  for (const destination of destinationsOf(topology)) {
    await channel.assertExchange(destination, 'topic', { durable: true });
  }
  for (const group of topology.groups) await declareGroup(channel, group);
}

async function declareGroup(channel: amqp.Channel, group: GroupTopology): Promise<void> {
  const workQueue = destinationNames.workQueue(group.destination, group.group);
  await channel.assertQueue(workQueue, { durable: true });
  await channel.bindQueue(workQueue, group.destination, '#');
  await channel.assertQueue(destinationNames.deadLetter(group.destination, group.group), { durable: true });
  for (const tier of group.retryTiersMs) {
    await channel.assertQueue(destinationNames.retry(group.destination, group.group, tier), {
      durable: true,
      arguments: {
        'x-message-ttl': tier,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': workQueue,
      },
    });
  }
}

/**
 * What the topology needs that does not exist, checked passively (no permission to configure anything is
 * needed). Bindings cannot be checked over AMQP; `nest-messaging topology apply` declares them.
 */
export async function missingRabbitTopology(
  model: amqp.ChannelModel,
  topology: MessagingTopology,
): Promise<string[]> {
  const missing: string[] = [];
  for (const destination of destinationsOf(topology)) {
    if (!(await exists(model, (c) => c.checkExchange(destination))))
      missing.push(`exchange '${destination}'`);
  }
  for (const group of topology.groups) {
    const queues = [
      destinationNames.workQueue(group.destination, group.group),
      ...group.retryTiersMs.map((tier) => destinationNames.retry(group.destination, group.group, tier)),
      destinationNames.deadLetter(group.destination, group.group),
    ];
    for (const queue of queues) {
      if (!(await exists(model, (c) => c.checkQueue(queue)))) missing.push(`queue '${queue}'`);
    }
  }
  return missing;
}

/** Runs a passive check on a channel of its own: a failed one closes its channel. */
async function exists(model: amqp.ChannelModel, check: (channel: amqp.Channel) => Promise<unknown>) {
  const channel = await model.createChannel();
  channel.on('error', () => undefined);
  try {
    await check(channel);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === NOT_FOUND) return false;
    throw error;
  } finally {
    await channel.close().catch(() => undefined);
  }
}
