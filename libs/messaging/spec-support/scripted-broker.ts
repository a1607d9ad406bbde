import { Clock } from '../src/common/clock';
import { FakeClock } from '../src/common/fake-clock';
import { MessageHeaders } from '../src/envelope/message-headers';
import { WireMessage } from '../src/envelope/wire-message';
import { PublishOutcome } from '../src/transports/publish-outcome';
import { JournalEntry, PublishCall, ScriptedOutcome } from './relay-journal';

/** The broker's answer to one publish call: an outcome per message (cycled), after `delayMs` or never. */
export interface ScriptedAnswer {
  readonly outcomes: readonly ScriptedOutcome[];
  readonly delayMs: number | 'never';
}

/** The part of a transport the relay uses. */
export interface ScriptedTransport {
  readonly kind: 'kafka' | 'rabbitmq';
  publish(messages: readonly WireMessage[]): Promise<PublishOutcome[]>;
  /** Reaches the broker unless it is `down`. */
  checkHealth(): Promise<{ connected: boolean }>;
}

/**
 * A broker that answers publish calls from a script (then, or once `healed`, confirms everything at once),
 * and records every call and every message it wrote, in order. Shared by the relays of a spec, each
 * publishing through a transport of its own. Unit specs only.
 */
export class ScriptedBroker {
  readonly calls: PublishCall[] = [];
  /** Message ids in the order the broker wrote them. */
  readonly written: string[] = [];
  /** From now on every call is confirmed at once (but for `refusedKeys`). */
  healed = false;
  /** Keys whose messages are always refused, whatever the script says (an unroutable destination, say). */
  readonly refusedKeys = new Set<string>();
  /** Message ids always refused (a type no queue is bound for, on RabbitMQ), whatever the script says. */
  readonly refusedMessages = new Set<string>();
  /**
   * Message ids always answered AMBIGUOUS, not written (a RabbitMQ message over `max_message_size`, a Kafka
   * partition without a leader), whatever the script says.
   */
  readonly ambiguousMessages = new Set<string>();
  /** The broker does not answer health checks (publishes follow the script). */
  down = false;
  private readonly script: ScriptedAnswer[];

  constructor(
    script: readonly ScriptedAnswer[] = [],
    /** Where publish calls are recorded, beside the store's claims and marks. */
    private readonly journal: JournalEntry[] = [],
    /** The world's clock: calls are dated and delayed answers come on it. */
    private readonly clock: Pick<Clock, 'now' | 'setTimeout'> = new FakeClock(),
  ) {
    this.script = [...script];
  }

  /**
   * A transport for the relay `relay()` names; while `alive()` is false, its calls never answer (a dead
   * process).
   */
  transport(relay: () => string, alive: () => boolean = () => true): ScriptedTransport {
    return {
      kind: 'rabbitmq',
      publish: (messages) => (alive() ? this.publish(relay(), messages) : new Promise(() => undefined)),
      checkHealth: () => Promise.resolve({ connected: !this.down }),
    };
  }

  private publish(relay: string, messages: readonly WireMessage[]): Promise<PublishOutcome[]> {
    const answer: ScriptedAnswer = (!this.healed && this.script.shift()) || {
      outcomes: ['confirm'],
      delayMs: 0,
    };
    const messageIds = messages.map((m) => m.headers[MessageHeaders.ID]);
    const outcomes = messages.map((message, i): ScriptedOutcome => {
      if (this.ambiguousMessages.has(messageIds[i])) return 'ambiguous-lost';
      if (this.refusedKeys.has(message.key ?? '') || this.refusedMessages.has(messageIds[i])) return 'reject';
      return answer.outcomes[i % answer.outcomes.length];
    });
    const call: PublishCall = { index: this.calls.length, relay, at: this.clock.now(), messageIds, outcomes };
    this.calls.push(call);
    this.journal.push({ kind: 'published', ...call });
    messageIds.forEach((id, i) => {
      if (outcomes[i] === 'confirm' || outcomes[i] === 'ambiguous-written') this.written.push(id);
    });
    const answered = outcomes.map((outcome): PublishOutcome => {
      if (outcome === 'confirm') return { status: 'CONFIRMED' };
      if (outcome === 'reject') return { status: 'REJECTED', error: new Error('refused (scripted)') };
      return { status: 'AMBIGUOUS', error: new Error('no answer (scripted)') };
    });
    if (answer.delayMs === 'never') return new Promise(() => undefined);
    const delayMs = answer.delayMs;
    return delayMs > 0
      ? new Promise((resolve) => this.clock.setTimeout(() => resolve(answered), delayMs))
      : Promise.resolve(answered);
  }
}
