import { createHash, Hash } from 'node:crypto';
import { canonicalJson } from '../canonical-json';
import { PlannedMessage } from '../planned-message';

/**
 * What a plan at scale signs of its selection (`RedrivePlan.bulk`, docs/guide/08-redrive.md "Incidents at
 * scale"): the messages themselves stay in the plan store, in order; the plan holds their counts and a digest
 * over all of them, so the approver signs one hash and execution can re-derive it from the store.
 */
export interface BulkSelection {
  /** The id of the plan's items in the plan store (`messaging_redrive_bulk_plan`). */
  readonly store: string;
  /** Messages the plan moves (redrives or discards). */
  readonly taken: number;
  /** Kafka: records not taken that lie before a taken one in their partition; re-parked at the end. */
  readonly kept: number;
  /** Selected but not redrivable (origin refused, key not restorable): left in the source. */
  readonly skipped: number;
  /** `bulkDigest()` over the stored items in order. */
  readonly digest: string;
  /** How many taken messages carry each failure code (`(none)` for none): what the approver reads. */
  readonly byCode: Readonly<Record<string, number>>;
}

/** What happens to an item of a plan at scale: `take` moves it, `keep` re-parks it (Kafka). */
export type BulkRole = 'take' | 'keep';

/** One item of a plan at scale, as the plan store holds it: its place in the order, its role, its description. */
export interface BulkItem {
  /** Its place in the plan's order (ascending, gaps allowed). */
  readonly seq: number;
  /** Moved (`take`) or re-parked (`keep`). */
  readonly role: BulkRole;
  /** The message as a plan describes it (position as planned, fingerprint). */
  readonly message: PlannedMessage;
}

/**
 * The digest of a plan's items, fed in order one page at a time (it holds no item): SHA-256 over the
 * canonical JSON of each item's order, role and whole description, one line each. Any item changed, added,
 * removed or reordered gives another digest.
 */
export class BulkDigest {
  private readonly hash: Hash = createHash('sha256');
  private lastSeq = -1;
  private items = 0;

  /** Adds the next items; refuses items out of order (the store pages by `seq`). */
  add(items: readonly BulkItem[]): void {
    for (const item of items) {
      if (!Number.isSafeInteger(item.seq) || item.seq <= this.lastSeq) {
        throw new RangeError(`bulk items must come in ascending order: ${item.seq} after ${this.lastSeq}`);
      }
      this.lastSeq = item.seq;
      this.items++;
      this.hash.update(canonicalJson([item.seq, item.role, item.message]));
      this.hash.update('\n');
    }
  }

  /** How many items were added. */
  get count(): number {
    return this.items;
  }

  /** `sha256:<hex>` of what was added (once). */
  digest(): string {
    return `sha256:${this.hash.digest('hex')}`;
  }
}

/** The digest of `items`, in order (for tests and small sets; the store's pages go through `BulkDigest`). */
export function bulkDigest(items: readonly BulkItem[]): string {
  const digest = new BulkDigest();
  digest.add(items);
  return digest.digest();
}
