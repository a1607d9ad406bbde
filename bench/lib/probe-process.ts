import { ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { witnessQueue } from './arrival-witness';
import { BrokerFixtures } from './brokers';
import { trackConsumerDestinations } from './consumer-app';
import { HandlerProbe } from './handler-probe';
import { TransportKind } from './plan';
import { now, within } from './time';

/** What runs in the process: the library's inbox consumer, or a raw reader of the destination. */
export type ProbeRole =
  | { kind: 'consumer'; databaseUrl: string; schema: string; group: string }
  | { kind: 'witness'; queue?: string }
  | { kind: 'relay'; databaseUrl: string; schema: string; batchSize: number };

export interface ProbeProcessOptions {
  transport: TransportKind;
  destination: string;
  role: ProbeRole;
}

/** Messages between the bench and the process (`probe-process.main.ts`). */
export type ProbeMessage =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'start'; run: string; seq: number; at: number }
  | { type: 'ping'; id: number }
  | { type: 'pong'; id: number; at: number }
  | { type: 'wake' }
  | { type: 'round'; confirmed: number }
  | { type: 'stop' };

const MAIN = path.join(__dirname, 'probe-process.main.ts');

/**
 * A consumer (or a raw reader) in a Node process of its own, as a subscriber service runs beside the
 * service that writes: it does not share the writer's and relay's event loop. Each handler start comes back
 * over IPC with the process's `now()`; the offset between the two processes' clocks is measured (the
 * round trip with the least delay of several pings) and taken off, so `probe` holds times on this process's
 * clock.
 */
export class ProbeProcess {
  readonly probe = new HandlerProbe();
  /** A relay process: messages it confirmed since started (rounds it reported). */
  confirmed = 0;
  /** The process's clock minus this one's, in ms, and how far off that estimate can be (half the round trip). */
  clockOffsetMs = 0;
  clockErrorMs = 0;
  private readonly pongs = new Map<number, (at: number) => void>();

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (message: ProbeMessage) => {
      if (message.type === 'start')
        this.probe.record(message.run, message.seq, message.at - this.clockOffsetMs);
      else if (message.type === 'pong') this.pongs.get(message.id)?.(message.at);
      else if (message.type === 'round') this.confirmed += message.confirmed;
    });
  }

  static async start(options: ProbeProcessOptions): Promise<ProbeProcess> {
    const child = fork(MAIN, [JSON.stringify(options)], {
      execArgv: ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const probeProcess = new ProbeProcess(child);
    try {
      await within(
        new Promise<void>((resolve, reject) => {
          child.on('message', (message: ProbeMessage) => {
            if (message.type === 'ready') resolve();
            if (message.type === 'failed')
              reject(new Error(`${options.role.kind} process: ${message.message}`));
          });
          child.once('exit', (code) => reject(new Error(`${options.role.kind} process exited (${code})`)));
        }),
        120_000,
        `starting the ${options.role.kind} process`,
      );
      await probeProcess.syncClock();
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    return probeProcess;
  }

  /** A relay process: wakes its relay (it drains until a claim finds nothing). */
  wake(): void {
    this.child.send({ type: 'wake' } satisfies ProbeMessage);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ type: 'stop' } satisfies ProbeMessage);
    await within(exited, 30_000, 'stopping the probe process').catch(() => {
      this.child.kill('SIGKILL');
    });
  }

  /** Estimates the clock offset from the ping with the shortest round trip. */
  private async syncClock(pings = 25): Promise<void> {
    let best = { rtt: Infinity, offset: 0 };
    for (let id = 0; id < pings; id++) {
      const sent = now();
      const at = await within(
        new Promise<number>((resolve) => {
          this.pongs.set(id, resolve);
          this.child.send({ type: 'ping', id } satisfies ProbeMessage);
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

/** The library's inbox consumer of `destination` in `group`, in a process of its own. */
export async function startConsumerProcess(
  brokers: BrokerFixtures,
  transport: TransportKind,
  destination: string,
  consumer: { databaseUrl: string; schema: string; group: string },
): Promise<ProbeProcess> {
  trackConsumerDestinations(brokers, transport, destination, consumer.group);
  return ProbeProcess.start({ transport, destination, role: { kind: 'consumer', ...consumer } });
}

/** A raw reader of `destination` (see `ArrivalWitness`), in a process of its own. */
export async function startWitnessProcess(
  brokers: BrokerFixtures,
  transport: TransportKind,
  destination: string,
): Promise<ProbeProcess> {
  let queue: string | undefined;
  if (transport === 'rabbitmq') {
    queue = witnessQueue(destination);
    await brokers.exchange(destination, queue); // declared (and deleted) here; the process only reads it
  }
  return ProbeProcess.start({ transport, destination, role: { kind: 'witness', queue } });
}

/**
 * The library's relay on the outbox in `schema`, in a process of its own: woken by `wake()` only (its
 * safety poll is out of the way), it reports each round's confirmed messages (`confirmed`).
 */
export async function startRelayProcess(
  transport: TransportKind,
  destination: string,
  relay: { databaseUrl: string; schema: string; batchSize: number },
): Promise<ProbeProcess> {
  return ProbeProcess.start({ transport, destination, role: { kind: 'relay', ...relay } });
}
