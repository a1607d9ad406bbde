import path from 'node:path';
import { witnessQueue } from './arrival-witness';
import { BrokerFixtures } from './brokers';
import { trackConsumerDestinations } from './consumer-app';
import { HandlerProbe } from './handler-probe';
import { TransportKind } from './plan';
import { ProbeChild } from './probe-child';
import { StatementCounts } from './statement-census';
import { now, within } from './time';

export type { ProbeMessage, ProbeProcessOptions, ProbeRole } from './probe-messages';
import type { ProbeProcessOptions } from './probe-messages';

export const PROBE_MAIN = path.join(__dirname, 'probe-process.main.ts');

/**
 * A consumer (or a raw reader, or a relay) in a Node process of its own, as a subscriber service runs beside
 * the service that writes: it does not share the writer's and relay's event loop. Each handler start comes
 * back over IPC with the process's `now()`; the offset between the two processes' clocks is measured (the
 * round trip with the least delay of several pings) and taken off, so `probe` holds times on this process's
 * clock. The process comes from `ProbeProcesses`: a fresh one, or in the smoke run one a former role left.
 */
export class ProbeProcess {
  readonly probe = new HandlerProbe();
  /** A relay process: messages it confirmed since started (rounds it reported). */
  confirmed = 0;
  /** The process's clock minus this one's, in ms, and how far off that estimate can be (half the round trip). */
  clockOffsetMs = 0;
  clockErrorMs = 0;
  private readonly pongs = new Map<number, (at: number) => void>();
  private statementsAnswer?: (counts: StatementCounts) => void;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly child: ProbeChild,
    private readonly release: (child: ProbeChild) => Promise<void>,
  ) {
    this.unsubscribe = child.onMessage((message) => {
      if (message.type === 'start')
        this.probe.record(message.run, message.seq, message.at - this.clockOffsetMs);
      else if (message.type === 'pong') this.pongs.get(message.id)?.(message.at);
      else if (message.type === 'round') this.confirmed += message.confirmed;
      else if (message.type === 'statementCounts') this.statementsAnswer?.(message.counts);
    });
  }

  /** The process's id (CPU time from /proc). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Starts the role in the process; resolves once it runs and the clocks are lined up. */
  async start(options: ProbeProcessOptions): Promise<this> {
    await within(
      this.child.request({ type: 'role', options }, 'started', options.role.kind),
      120_000,
      `starting the ${options.role.kind} process`,
    );
    await this.syncClock();
    return this;
  }

  /** The statements the process sent to its database since the last ask (or its role's start), by kind. */
  async statements(): Promise<StatementCounts> {
    const answer = new Promise<StatementCounts>((resolve) => (this.statementsAnswer = resolve));
    this.child.send({ type: 'statements' });
    return within(answer, 5_000, 'statement counts');
  }

  /** A relay process: wakes its relay (it drains until a claim finds nothing). */
  wake(): void {
    this.child.send({ type: 'wake' });
  }

  /** Ends the role: the process exits, or (smoke run) goes back to the pool for the next role. */
  async stop(): Promise<void> {
    this.unsubscribe();
    await this.release(this.child);
  }

  /** Estimates the clock offset from the ping with the shortest round trip. */
  private async syncClock(pings = 25): Promise<void> {
    let best = { rtt: Infinity, offset: 0 };
    for (let id = 0; id < pings; id++) {
      const sent = now();
      const at = await within(
        new Promise<number>((resolve) => {
          this.pongs.set(id, resolve);
          this.child.send({ type: 'ping', id });
        }),
        5_000,
        'clock ping',
      );
      const received = now();
      this.pongs.delete(id);
      if (received - sent < best.rtt) best = { rtt: received - sent, offset: at - (sent + received) / 2 };
    }
    this.clockOffsetMs = best.offset;
    this.clockErrorMs = best.rtt / 2;
  }
}

/** Where the scenarios get their processes from (see `ProbeProcesses`). */
export interface ProbeStarter {
  start(options: ProbeProcessOptions): Promise<ProbeProcess>;
}

/** The library's inbox consumer of `destination` in `group`, in a process of its own. */
export async function startConsumerProcess(
  processes: ProbeStarter,
  brokers: BrokerFixtures,
  transport: TransportKind,
  destination: string,
  consumer: { databaseUrl: string; schema: string; group: string },
): Promise<ProbeProcess> {
  trackConsumerDestinations(brokers, transport, destination, consumer.group);
  return processes.start({ transport, destination, role: { kind: 'consumer', ...consumer } });
}

/** A raw reader of `destination` (see `ArrivalWitness`), in a process of its own. */
export async function startWitnessProcess(
  processes: ProbeStarter,
  brokers: BrokerFixtures,
  transport: TransportKind,
  destination: string,
): Promise<ProbeProcess> {
  let queue: string | undefined;
  if (transport === 'rabbitmq') {
    queue = witnessQueue(destination);
    await brokers.exchange(destination, queue); // declared (and deleted) here; the process only reads it
  }
  return processes.start({ transport, destination, role: { kind: 'witness', queue } });
}

/**
 * The library's relay on the outbox in `schema`, in a process of its own: woken by `wake()` only (its
 * safety poll is out of the way), it reports each round's confirmed messages (`confirmed`).
 */
export async function startRelayProcess(
  processes: ProbeStarter,
  transport: TransportKind,
  destination: string,
  relay: { databaseUrl: string; schema: string; batchSize: number },
): Promise<ProbeProcess> {
  return processes.start({ transport, destination, role: { kind: 'relay', ...relay } });
}
