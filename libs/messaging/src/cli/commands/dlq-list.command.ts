import { Command } from 'commander';
import { BrokerFlags } from '../admin-options';
import { formatList } from '../format/result-format';
import { CommandContext, withBrokerOptions } from './command-context';

/** `nest-messaging dlq list [--queue <name...>]`: dead-letter destinations and how many messages wait. */
export function listCommand(context: CommandContext): Command {
  return withBrokerOptions(new Command('list'))
    .description('show dead-letter destinations and how many messages wait in each')
    .option('--queue <names...>', 'dead-letter destinations to show (RabbitMQ cannot list queues: name them)')
    .action(async (flags: BrokerFlags & { queue?: string[] }) => {
      const queues = await context.withService(flags, (service) => service.list(flags.queue ?? []));
      context.print(formatList(queues));
    });
}
