import { FakeClock } from '../src/common/fake-clock';
import { MessageTracing } from '../src/observability/message-tracing';
import { MessagingMetrics } from '../src/observability/messaging-metrics';
import { resolveMessagingOptions } from '../src/options/resolve-messaging-options';
import { RelayOptions } from '../src/messaging-options.interface';
import { OutboxRelay, RelayRoundResult } from '../src/outbox/outbox-relay';
import { OutboxStore } from '../src/outbox/outbox-store';
import { RelayWakeup } from '../src/outbox/relay-wakeup';
import { MessageTransport } from '../src/transports/message-transport.interface';
import { ModelLatency, OutboxModelStore } from './outbox-model';
import { JournalEntry, relayViolations } from './relay-journal';
import { ScriptedAnswer, ScriptedBroker } from './scripted-broker';
import { turnless } from './turnless-clock';

/** One relay of a model world: its own wake-up signal, rounds, and a switch that kills its process. */
export interface ModelRelay {
  readonly relay: OutboxRelay;
  readonly wakeup: RelayWakeup;
  readonly rounds: RelayRoundResult[];
  readonly alive: boolean;
  /** From now on its store and broker calls never answer, as if its process were gone. */
  kill(): void;
}

/** Several relays on one model outbox table and one scripted broker, on one `FakeClock`. */
export interface ModelWorld {
  /** The world's time: the relays', the store's and the broker's; moves on `clock.advance`. */
  readonly clock: FakeClock;
  readonly store: OutboxModelStore;
  readonly broker: ScriptedBroker;
  readonly relays: ModelRelay[];
  /**
   * Commits rows and wakes the committing instance's relay (`by`, if alive), or every live relay (as NOTIFY
   * would) when `by` is omitted.
   */
  commit(count: number, key?: string, by?: number): void;
  /** The invariants' violations so far (see `relayViolations`). */
  violations(): string[];
  /**
   * Stops the live relays (their shutdown: the round in flight finishes, their leases are released), with
   * the world's clock running so that the round can finish.
   */
  stop(): Promise<void>;
}

/** What a model world is made of. */
export interface ModelWorldOptions {
  readonly relays?: number;
  readonly relay?: Partial<RelayOptions>;
  readonly script?: readonly ScriptedAnswer[];
  readonly latency?: ModelLatency;
  /** MySQL/MariaDB's way: the batch before is marked beside the claim. Default: in it (PostgreSQL). */
  readonly marksSentBesideClaim?: boolean;
}

/**
 * Starts relays on an in-memory outbox (`OutboxModelStore`) and a scripted broker (`ScriptedBroker`),
 * sharing one journal and one `FakeClock` (`world.clock`). Unit specs only.
 */
export function startModelWorld(options: ModelWorldOptions = {}): ModelWorld {
  const journal: JournalEntry[] = [];
  const clock = new FakeClock();
  const store = new OutboxModelStore(journal, options.latency, clock);
  store.marksSentInClaim = !options.marksSentBesideClaim;
  const broker = new ScriptedBroker(options.script, journal, clock);
  const resolved = resolveMessagingOptions({
    serviceName: 'model',
    transport: { kind: 'rabbitmq', url: 'amqp://localhost' },
    relay: {
      pollIntervalMs: 60_000,
      leaseMs: 1_000,
      retryInitialDelayMs: 100,
      retryMaxDelayMs: 400,
      ...options.relay,
    },
  });
  const relays = Array.from({ length: options.relays ?? 1 }, (): ModelRelay => {
    let alive = true;
    let name = '';
    const never = () => new Promise<never>(() => undefined);
    const ownStore = new Proxy(store, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          alive ? (value as (...a: unknown[]) => unknown).apply(target, args) : never();
      },
    });
    const wakeup = new RelayWakeup();
    const relay = new OutboxRelay(
      ownStore as unknown as OutboxStore,
      broker.transport(
        () => name,
        () => alive,
      ) as unknown as MessageTransport,
      wakeup,
      resolved,
      new MessagingMetrics(),
      new MessageTracing(),
      turnless(clock),
    );
    name = relay.instanceId;
    const rounds: RelayRoundResult[] = [];
    relay.onRound((round) => rounds.push(round));
    relay.onApplicationBootstrap();
    return {
      relay,
      wakeup,
      rounds,
      get alive() {
        return alive;
      },
      kill() {
        alive = false;
        journal.push({ kind: 'died', owner: name, at: clock.now() });
      },
    };
  });
  return {
    clock,
    store,
    broker,
    relays,
    commit(count, key, by) {
      store.add(count, key);
      const woken = by === undefined ? relays : relays.slice(by, by + 1);
      woken.filter((r) => r.alive).forEach((r) => r.wakeup.fire());
    },
    violations: () => relayViolations(journal, store.rows),
    async stop() {
      const stopped = Promise.all(
        relays.filter((r) => r.alive).map((r) => r.relay.beforeApplicationShutdown()),
      );
      await clock.advance(10_000);
      await stopped;
    },
  };
}
