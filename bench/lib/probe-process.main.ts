/**
 * The process `ProbeProcess` forks: the library's inbox consumer (or a raw reader) of one destination,
 * reporting each handler start (or arrival) to the bench over IPC, on `now()`; or the library's relay,
 * reporting its rounds.
 */
import { INestApplicationContext } from '@nestjs/common';
import { OutboxRelay } from 'nest-reliable-messaging/testing';
import { createBenchApp } from './bench-app';
import { ArrivalWitness } from './arrival-witness';
import { benchEvent } from './bench-event';
import { BrokerFixtures } from './brokers';
import { startInboxConsumerApp } from './consumer-app';
import { HandlerProbe } from './handler-probe';
import { ProbeMessage, ProbeProcessOptions } from './probe-process';
import { now } from './time';

/** Forwards each start to the bench instead of keeping it (the bench keeps the first of repeats). */
class ForwardingProbe extends HandlerProbe {
  override record(run: string, seq: number, at: number): void {
    send({ type: 'start', run, seq, at });
  }
}

function send(message: ProbeMessage): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as ProbeProcessOptions;
  const probe = new ForwardingProbe();
  // Only for clients: nothing here is tracked for cleanup (the bench tracks and deletes what is declared).
  const brokers = new BrokerFixtures();
  let app: INestApplicationContext | undefined;
  let witness: ArrivalWitness | undefined;
  const { role } = options;
  if (role.kind === 'consumer') {
    app = await startInboxConsumerApp({
      databaseUrl: role.databaseUrl,
      schema: role.schema,
      transport: options.transport,
      event: benchEvent(options.destination),
      group: role.group,
      probe,
      brokers,
    });
  } else if (role.kind === 'relay') {
    app = await createBenchApp({
      databaseUrl: role.databaseUrl,
      schema: role.schema,
      transport: options.transport,
      serviceName: 'bench-relay',
      relay: { batchSize: role.batchSize, pollIntervalMs: 3_600_000 },
    });
    const relay = app.get(OutboxRelay);
    relay.onRound((round) => send({ type: 'round', confirmed: round.confirmed }));
    process.on('message', (message: ProbeMessage) => {
      if (message.type === 'wake') relay.wake();
    });
  } else {
    witness = await new ArrivalWitness(
      options.transport,
      options.destination,
      brokers,
      probe,
      role.queue,
    ).start();
  }
  process.on('message', (message: ProbeMessage) => {
    if (message.type === 'ping') send({ type: 'pong', id: message.id, at: now() });
    if (message.type === 'stop') {
      void (async () => {
        await app?.close();
        await witness?.stop();
        await brokers.close();
        process.exit(0);
      })();
    }
  });
  // The bench going away (killed, crashed) takes this process with it.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

main().catch((error: unknown) => {
  send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 100);
});
