import type { InspectResult, StartedTestContainer } from 'testcontainers';

const CLIENT_PORT = 9092;
const STARTER = '/tmp/start-kafka.sh';
const WAITING = 'waiting for the start script';

/** A Kafka node in a container: its bootstrap address for clients outside it, and its stop. */
export interface StartedKafkaNode {
  readonly brokers: string;
  stop(): Promise<unknown>;
}

/**
 * Starts one Apache Kafka KRaft node (broker and controller) in a container of the `apache/kafka` image, or of
 * any image with its `/opt/kafka/bin` scripts (CI builds one from the Maven jars: docker/images/kafka). The
 * testcontainers Kafka module drives Confluent's image only, hence a GenericContainer of our own. The client
 * listener is advertised as the host and port the test process sees, known only once the container runs: the
 * container waits for a start script, which `containerStarted` writes with that address, as the module does.
 */
export async function startApacheKafka(image: string): Promise<StartedKafkaNode> {
  // Loaded lazily: the local path never needs a Docker client.
  const { BoundPorts, GenericContainer, getContainerRuntimeClient, Wait, waitForContainer } =
    await import('testcontainers');

  class ApacheKafkaContainer extends GenericContainer {
    constructor() {
      super(image);
      this.withExposedPorts(CLIENT_PORT)
        .withEntrypoint([
          'bash',
          '-c',
          `echo '${WAITING}'; while [ ! -f ${STARTER} ]; do sleep 0.1; done; exec ${STARTER}`,
        ])
        .withWaitStrategy(Wait.forLogMessage(WAITING))
        .withStartupTimeout(300_000);
    }

    protected override async containerStarted(
      container: StartedTestContainer,
      inspect: InspectResult,
    ): Promise<void> {
      const advertised =
        `PLAINTEXT://${container.getHost()}:${container.getMappedPort(CLIENT_PORT)},` +
        `BROKER://${inspect.hostname}:9093`;
      await container.copyContentToContainer([
        { content: starterScript(advertised), target: STARTER, mode: 0o755 },
      ]);
      const client = await getContainerRuntimeClient();
      const ports = BoundPorts.fromInspectResult(client.info.containerRuntime.hostIps, inspect).filter([
        CLIENT_PORT,
      ]);
      await waitForContainer(
        client,
        client.container.getById(container.getId()),
        Wait.forLogMessage(/Kafka Server started/).withStartupTimeout(300_000),
        ports,
      );
    }
  }

  const started = await new ApacheKafkaContainer().start();
  return {
    brokers: `${started.getHost()}:${started.getMappedPort(CLIENT_PORT)}`,
    stop: () => started.stop(),
  };
}

/** Formats the storage and starts the node, configured as the local test broker is (tools/infra/kafka-broker.ts). */
function starterScript(advertised: string): string {
  return `#!/bin/bash
set -euo pipefail
cat > /tmp/server.properties <<'PROPERTIES'
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@localhost:9094
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://:${CLIENT_PORT},BROKER://:9093,CONTROLLER://:9094
advertised.listeners=${advertised}
inter.broker.listener.name=BROKER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=/tmp/kafka-data
num.partitions=3
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
PROPERTIES
/opt/kafka/bin/kafka-storage.sh format --ignore-formatted -t "$(/opt/kafka/bin/kafka-storage.sh random-uuid)" -c /tmp/server.properties
exec /opt/kafka/bin/kafka-server-start.sh /tmp/server.properties
`;
}
