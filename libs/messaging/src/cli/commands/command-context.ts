import { Command, Option } from 'commander';
import { RedriveService } from '../../dead-letter/redrive/redrive.service';
import { AdminEnv, BrokerFlags, resolveAdminOptions } from '../admin-options';
import { CliIo } from '../cli-io';

/** What every command runs with. */
export interface CommandContext {
  readonly io: CliIo;
  /** Prints lines to standard output. */
  print(lines: readonly string[]): void;
  /** Runs `work` with a `RedriveService` built from the flags and environment, then closes it. */
  withService<T>(flags: BrokerFlags, work: (service: RedriveService) => Promise<T>): Promise<T>;
}

/** A context over `io`. */
export function commandContext(io: CliIo): CommandContext {
  return {
    io,
    print: (lines) => io.out(lines.map((line) => `${line}\n`).join('')),
    async withService(flags, work) {
      const service = new RedriveService({ ...resolveAdminOptions(flags, io.env), clock: io.now });
      try {
        return await work(service);
      } finally {
        await service.close();
      }
    },
  };
}

/** Adds the broker and admin options every `dlq` command takes. */
export function withBrokerOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--transport <kind>', `kafka or rabbitmq (${AdminEnv.TRANSPORT})`).choices([
        'kafka',
        'rabbitmq',
      ]),
    )
    .option('--amqp-url <url>', `RabbitMQ URL, may carry the admin user (${AdminEnv.AMQP_URL})`)
    .option('--kafka-brokers <list>', `Kafka brokers, comma-separated (${AdminEnv.KAFKA_BROKERS})`)
    .option('--kafka-sasl <mechanism>', `plain, scram-sha-256 or scram-sha-512 (${AdminEnv.KAFKA_SASL})`)
    .option('--kafka-ssl', `connect to Kafka with TLS (${AdminEnv.KAFKA_SSL}=true)`)
    .option(
      '--principal <name>',
      `admin user or principal (${AdminEnv.PRINCIPAL}); secret in ${AdminEnv.TOKEN}`,
    );
}
