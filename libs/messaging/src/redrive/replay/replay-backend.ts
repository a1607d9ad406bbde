import { WireMessage } from '../../envelope/wire-message';
import { ReplaySkipReason } from './replay-copy';
import { ReplayPacer } from './replay-pacer';
import { ReplayPartitionWindow, ReplayPlan } from './replay-plan';
import { PartitionWatermarks } from './replay-window';

/** What became of one partition's window (on RabbitMQ: the journal, partition 0). */
export interface ReplayedPartition {
  /** The partition. */
  readonly partition: number;
  /** Copies published and confirmed (Kafka: acks=all; RabbitMQ: a publisher confirm). */
  readonly published: number;
  /** Records of the window not replayed, and why (a redrive's copy for another group, no message id). */
  readonly skipped: number;
  /** The offset after the last record done (`to` when the window was done), a decimal string. */
  readonly next: string;
  /** Set when a copy was not confirmed: the partition stopped there. */
  readonly error?: string;
}

/** Makes the copy of a record of the window, or says why it makes none. */
export type CopyOf = (
  record: WireMessage,
) => { readonly copy: WireMessage } | { readonly skipped: ReplaySkipReason };

/**
 * What `ReplayService` needs of a broker: the offsets the source keeps, a window by time resolved to
 * offsets, where the copies for a group go, and the replay itself (copies made by `copyOf`, each admitted by
 * the pacer and confirmed before the next). Kafka reads the topic; RabbitMQ the destination's journal.
 */
export interface ReplayBackend {
  /** The offsets kept, per partition. */
  watermarks(source: string): Promise<PartitionWatermarks[]>;
  /** The offsets `[first at or after from, first at or after to)`, per partition, the empty ones left out. */
  windowByTime(
    source: string,
    from: Date,
    to: Date,
    watermarks: readonly PartitionWatermarks[],
  ): Promise<ReplayPartitionWindow[]>;
  /** Where a replay's copies for `group` go: Kafka the topic itself, RabbitMQ the group's work queue. */
  targetOf(source: string, group: string): string;
  /** What the plan records of where it reads: RabbitMQ the journal's name. */
  planFields(source: string): Partial<Pick<ReplayPlan, 'journal'>>;
  /** Publishes the copies of the plan's window. */
  replay(plan: ReplayPlan, copyOf: CopyOf, pacer: ReplayPacer): Promise<ReplayedPartition[]>;
  close(): Promise<void>;
}
