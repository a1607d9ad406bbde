import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Column, Entity, PrimaryGeneratedColumn, Repository } from 'typeorm';
import { Outbox, OutboxService } from 'nest-reliable-messaging';
import { BenchEvent, benchPayload } from './bench-event';

/** The business row each latency message comes with. */
@Entity({ name: 'bench_orders' })
export class BenchOrder {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'text' })
  key!: string;

  @Column({ type: 'integer' })
  seq!: number;
}

/** What the writer sends: the run's event, its padding and its number of keys. */
export class WriterSettings {
  constructor(
    readonly event: BenchEvent,
    readonly pad: string,
    readonly keys: number,
  ) {}
}

/** The business transaction: an order and its event, committed together (`@Outbox`). */
@Injectable()
export class BenchWriter {
  constructor(
    @InjectRepository(BenchOrder) private readonly orders: Repository<BenchOrder>,
    private readonly outbox: OutboxService,
    private readonly settings: WriterSettings,
  ) {}

  @Outbox()
  async place(run: string, seq: number): Promise<void> {
    const payload = benchPayload(run, seq, this.settings.keys, this.settings.pad);
    await this.orders.insert({ key: payload.key, seq });
    await this.outbox.add(this.settings.event, payload);
  }
}
