/* Usage: tsx tools/infra/kafka-cli.ts start|stop|status|kill [--port N] */
import { KafkaBroker } from './kafka-broker';
import { pinnedKafkaVersion } from './kafka-jars';
import { infraEnv, localKafkaPort } from './env';

async function main(): Promise<number> {
  const [command = 'status', ...rest] = process.argv.slice(2);
  const env = infraEnv();
  const portFlag = rest.indexOf('--port');
  const port = portFlag >= 0 ? Number(rest[portFlag + 1]) : localKafkaPort(env);
  const broker = new KafkaBroker({ port, log: (line) => console.log(line) });
  const version = await pinnedKafkaVersion();

  switch (command) {
    case 'start': {
      if (!env.localKafka && portFlag < 0) {
        const up = await broker.isAnswering(5_000);
        console.log(
          `KAFKA_BROKERS=${env.kafkaBrokers.join(',')} is set: no local broker is started (${up ? 'it answers' : 'it does NOT answer'}).`,
        );
        return up ? 0 : 1;
      }
      const result = await broker.start();
      console.log(
        result.reused
          ? `Kafka already running on ${broker.brokers[0]}: reused.`
          : `Kafka ${version} ready on ${broker.brokers[0]} in ${(result.elapsedMs / 1000).toFixed(1)} s.`,
      );
      return 0;
    }
    case 'stop':
    case 'kill': {
      const stopped = command === 'kill' ? await broker.kill() : await broker.stop();
      if (stopped)
        console.log(
          `Kafka on port ${port} ${command === 'kill' ? 'killed' : 'stopped'} (data kept in ${broker.stateDir}).`,
        );
      else if (await broker.isAnswering())
        console.log(`A broker answers on port ${port}, but it was not started by this project: left alone.`);
      else console.log(`No Kafka broker of ours is running on port ${port}.`);
      return 0;
    }
    case 'status': {
      const status = await broker.status();
      console.log(JSON.stringify({ version, ...status }, null, 2));
      return status.answering ? 0 : 3;
    }
    default:
      console.error(`Unknown command '${command}'. Use start, stop, kill or status.`);
      return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
