/**
 * The process `ProbeProcess` forks: it loads its modules, says `ready`, then runs the roles it is given one
 * at a time: the library's inbox consumer (or a raw reader) of one destination, reporting each handler start
 * (or arrival) to the bench over IPC, on `now()`; or the library's relay, reporting its rounds.
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
import { StatementCensus } from './statement-census';
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

/** A running role: what wakes it (a relay) and what ends it. */
interface Role {
  wake?(): void;
  stop(): Promise<void>;
}

/** What the role sends to its database, by kind (the bench asks with `statements`). */
let census: StatementCensus | undefined;

async function startRole(options: ProbeProcessOptions): Promise<Role> {
  const probe = new ForwardingProbe();
  // Only for clients: nothing here is tracked for cleanup (the bench tracks and deletes what is declared).
  const brokers = new BrokerFixtures();
  const { role } = options;
  let app: INestApplicationContext | undefined;
  let witness: ArrivalWitness | undefined;
  let wake: (() => void) | undefined;
  const stop = async () => {
    await app?.close();
    await witness?.stop();
    await brokers.close();
  };
  census?.stop();
  census = undefined;
  if (role.kind !== 'witness') {
    const database = new URL(role.databaseUrl).pathname.slice(1);
    census = new StatementCensus(() => database).start();
  }
  try {
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
      wake = () => relay.wake();
    } else {
      witness = await new ArrivalWitness(
        options.transport,
        options.destination,
        brokers,
        probe,
        role.queue,
      ).start();
    }
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  return { wake, stop };
}

function main(): void {
  let role: Role | undefined;
  process.on('message', (message: ProbeMessage) => {
    if (message.type === 'ping') send({ type: 'pong', id: message.id, at: now() });
    else if (message.type === 'wake') role?.wake?.();
    else if (message.type === 'statements') send({ type: 'statementCounts', counts: census?.take() ?? {} });
    else if (message.type === 'role') {
      startRole(message.options).then(
        (started) => {
          role = started;
          send({ type: 'started' });
        },
        (error: unknown) =>
          send({ type: 'failed', message: error instanceof Error ? error.message : String(error) }),
      );
    } else if (message.type === 'release' || message.type === 'stop') {
      const ending = role;
      role = undefined;
      void (async () => {
        await ending?.stop().catch(() => undefined);
        if (message.type === 'stop') process.exit(0);
        send({ type: 'released' });
      })();
    }
  });
  // The bench going away (killed, crashed) takes this process with it.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

main();
