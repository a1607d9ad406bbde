import { Command } from 'commander';
import { parseMessagingTopology, RabbitQueueType } from '../../topology/messaging-topology';
import { applyTopology, checkTopology } from '../../admin/apply-topology';
import { BrokerFlags, resolveAdminOptions } from '../admin-options';
import { readJson } from '../cli-io';
import { CommandContext, withBrokerOptions } from './command-context';

interface TopologyFlags extends BrokerFlags {
  readonly file: string;
  readonly partitions: string;
  readonly replicationFactor: string;
  readonly queueType: string;
}

/** `nest-messaging topology apply | check --file topology.json`: declare (as an admin) or check the topology. */
export function topologyCommand(context: CommandContext): Command {
  const options = async (flags: TopologyFlags) => {
    const topology = parseMessagingTopology(await readJson(context.io, flags.file));
    const topics = {
      numPartitions: positive(flags.partitions, '--partitions'),
      replicationFactor: positive(flags.replicationFactor, '--replication-factor'),
    };
    const queueType = queueTypeOf(flags.queueType);
    return { admin: { ...resolveAdminOptions(flags, context.io.env), topics, queueType }, topology };
  };
  const withFile = (command: Command) =>
    withBrokerOptions(command)
      .requiredOption(
        '--file <topology.json>',
        '{ "destinations": [...], "groups": [{ group, destination, retryTiersMs, queueType? }] }',
      )
      .option('--partitions <n>', 'Kafka: partitions of a created topic', '3')
      .option('--replication-factor <n>', 'Kafka: replicas of a created topic (3 in production)', '1')
      .option(
        '--queue-type <classic|quorum>',
        "RabbitMQ: type of the queues of groups without a queueType ('quorum' on a cluster)",
        'classic',
      );
  const apply = withFile(new Command('apply'))
    .description(
      'declare destinations, work queues, retry and dead-letter destinations (idempotent), as an admin',
    )
    .action(async (flags: TopologyFlags) => {
      const { admin, topology } = await options(flags);
      await applyTopology(admin, topology);
      context.print([
        `Topology applied: ${topology.destinations.length} destination(s), ${topology.groups.length} group(s).`,
      ]);
    });
  const check = withFile(new Command('check'))
    .description('list what the topology needs that is missing (exit 1 if anything is)')
    .action(async (flags: TopologyFlags) => {
      const { admin, topology } = await options(flags);
      const missing = await checkTopology(admin, topology);
      if (missing.length > 0) throw new Error(`Missing: ${missing.join(', ')}.`);
      context.print(['Everything the topology names exists.']);
    });
  return new Command('topology')
    .description('the broker objects services need: declared by an admin, only checked by services')
    .addCommand(apply)
    .addCommand(check);
}

function positive(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} is a whole number from 1.`);
  return n;
}

function queueTypeOf(text: string): RabbitQueueType {
  if (text === 'classic' || text === 'quorum') return text;
  throw new Error(`--queue-type is 'classic' or 'quorum', not '${text}'.`);
}
