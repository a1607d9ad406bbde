import { Command } from 'commander';
import { destinationNames } from '../../topology/destination-names';
import { BrokerFlags } from '../admin-options';
import { CliUsageError } from '../cli-usage.error';
import { formatList } from '../format/result-format';
import { CommandContext, TopologyFlag, withBrokerOptions, withTopologyOption } from './command-context';

/**
 * `nest-messaging dlq list [--queue <name...>] [--topology <file>]`: dead-letter destinations and how many
 * messages wait. Read-only: it needs no admin database. Kafka lists every `*.dlq` topic it may describe;
 * RabbitMQ cannot list queues over AMQP, so the queues come from `--queue` or the topology's groups.
 */
export function listCommand(context: CommandContext): Command {
  return withTopologyOption(withBrokerOptions(new Command('list')))
    .description('show dead-letter destinations and how many messages wait in each')
    .option('--queue <names...>', 'dead-letter destinations to show (RabbitMQ cannot list queues: name them)')
    .action(async (flags: BrokerFlags & TopologyFlag & { queue?: string[] }) => {
      const topology = await context.topology(flags);
      const fromTopology = (topology?.groups ?? []).map((g) =>
        destinationNames.deadLetter(g.destination, g.group),
      );
      const names = [...new Set([...(flags.queue ?? []), ...fromTopology])];
      const queues = await context.withReader(flags, async (service) => {
        if (service.transport === 'rabbitmq' && names.length === 0) {
          throw new CliUsageError(
            'RabbitMQ cannot list queues over AMQP: name the dead-letter queues with --queue ' +
              '(e.g. orders.billing.dlq) or give the topology file with --topology.',
          );
        }
        return service.list(names);
      });
      context.print(formatList(queues));
    });
}
