import { WireMessage } from '../src/envelope/wire-message';
import {
  copiesOf,
  CopiesOf,
  DeadLetterBackend,
  DeadLetterPeek,
} from '../src/redrive/dead-letter-backend.interface';
import { DeadLetterRecord, fingerprintOf } from '../src/redrive/dead-letter-record';
import { RedrivePlanStaleError } from '../src/redrive/errors/redrive-plan-stale.error';
import { MessagePosition, RedrivePlan } from '../src/redrive/redrive-plan';
import { MessageRedriveOutcome } from '../src/redrive/redrive-result';

/** A dead letter of `orders.billing.dlq` (RabbitMQ naming) as the library parks it, without a key. */
export function parkedLetter(
  id: string,
  payload: unknown,
  headers: Record<string, string> = {},
): WireMessage {
  return {
    destination: 'orders.billing.dlq',
    key: null,
    headers: {
      'msg.id': id,
      'msg.type': 'OrderPlaced',
      'content-type': 'application/json',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'msg.failure-category': 'VALIDATION',
      'msg.failure-code': 'ZodError',
      'msg.origin-destination': 'orders',
      'msg.retry-attempt': '1',
      'msg.last-failure-at': '2026-01-01T09:00:00.000Z',
      ...headers,
    },
    body: Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)),
  };
}

/**
 * A RabbitMQ-like dead-letter queue in memory: positions are indexes from the head; `move` checks
 * fingerprints, publishes every copy into `published` and removes (settles) the moved records.
 */
export class FakeDeadLetters implements DeadLetterBackend {
  readonly kind = 'rabbitmq' as const;
  readonly published: WireMessage[] = [];
  readonly archives: string[] = [];

  constructor(readonly queue: WireMessage[]) {}

  async list(names: readonly string[]) {
    return names.map((name) => ({ name, exists: true, depth: this.queue.length }));
  }

  async peek(source: string, limit: number): Promise<DeadLetterPeek> {
    return {
      records: this.queue.slice(0, limit).map((wire, index) => this.record(wire, index)),
      depth: this.queue.length,
    };
  }

  async scan(
    _source: string,
    visit: (record: DeadLetterRecord) => Promise<boolean> | boolean,
  ): Promise<{ readonly depth: number }> {
    const depth = this.queue.length;
    for (const [index, wire] of this.queue.entries()) if (!(await visit(this.record(wire, index)))) break;
    return { depth };
  }

  async peekAt(_source: string, position: MessagePosition): Promise<DeadLetterRecord | undefined> {
    const index = position.kind === 'queue' ? position.index : -1;
    const wire = this.queue[index];
    return wire ? this.record(wire, index) : undefined;
  }

  async checkTarget() {}

  async ensureArchive(_source: string, archive: string) {
    this.archives.push(archive);
  }

  async move(
    plan: RedrivePlan,
    copyOf: CopiesOf,
    checkRead: (records: readonly DeadLetterRecord[]) => void,
  ): Promise<MessageRedriveOutcome[]> {
    const records = plan.messages.map((m) => {
      const index = m.position.kind === 'queue' ? m.position.index : -1;
      const wire = this.queue[index];
      if (!wire || fingerprintOf(wire) !== m.fingerprint) {
        throw new RedrivePlanStaleError(
          plan.source,
          `the message at position ${index} is not the planned one`,
        );
      }
      return this.record(wire, index);
    });
    checkRead(records);
    for (const record of records) this.published.push(...copiesOf(copyOf, record));
    const moved = new Set(records.map((r) => r.wire));
    this.queue.splice(0, this.queue.length, ...this.queue.filter((wire) => !moved.has(wire)));
    return plan.messages.map((m) => ({
      position: m.position,
      messageId: m.messageId,
      status: 'REDRIVEN' as const,
    }));
  }

  async close() {}

  private record(wire: WireMessage, index: number): DeadLetterRecord {
    return { position: { kind: 'queue', index }, wire };
  }
}
