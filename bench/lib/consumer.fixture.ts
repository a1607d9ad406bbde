import { Injectable, Type } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Column, Entity, PrimaryGeneratedColumn, Repository } from 'typeorm';
import { IdempotentHandler, MessageContext } from 'nest-reliable-messaging';
import { BenchEvent, BenchPayload } from './bench-event';
import { HandlerProbe } from './handler-probe';

/** What the handler writes: one row per message. */
@Entity({ name: 'bench_handled' })
export class BenchHandled {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'message_id', type: 'uuid' })
  messageId!: string;

  @Column({ type: 'text' })
  key!: string;

  @Column({ type: 'integer' })
  seq!: number;
}

/** The handler's own work, shared by the inbox consumer and the consumer without an inbox. */
export async function handleBenchMessage(
  handled: Repository<BenchHandled>,
  probe: HandlerProbe,
  payload: BenchPayload,
  messageId: string,
): Promise<void> {
  probe.started(payload.run, payload.seq);
  await handled.insert({ messageId, key: payload.key, seq: payload.seq });
}

/** A consumer of `event` in `group` through the library: inbox record and handler in one transaction. */
export function inboxConsumer(event: BenchEvent, group: string): Type {
  @Injectable()
  class BenchInboxConsumer {
    constructor(
      @InjectRepository(BenchHandled) private readonly handled: Repository<BenchHandled>,
      private readonly probe: HandlerProbe,
    ) {}

    @IdempotentHandler(event, { group })
    async onBenchEvent(payload: BenchPayload, context: MessageContext): Promise<void> {
      await handleBenchMessage(this.handled, this.probe, payload, context.messageId);
    }
  }
  return BenchInboxConsumer;
}
