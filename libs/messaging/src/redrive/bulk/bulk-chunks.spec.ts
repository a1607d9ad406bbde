import { PlannedMessage } from '../redrive-plan';
import { BULK_PAGE, BulkChunk, bulkChunks, shifted, StoredBulkItem } from './bulk-chunks';

function queued(i: number): PlannedMessage {
  return {
    position: { kind: 'queue', index: i },
    messageId: `m-${i}`,
    type: null,
    failureCategory: null,
    failureCode: null,
    attempts: null,
    originDestination: null,
    lastFailureAt: null,
    redriveCount: 0,
    previousRedriveIds: [],
    fingerprint: `sha256:${i}`,
  };
}

const inPartition = (partition: number, offset: number): PlannedMessage => ({
  ...queued(offset),
  position: { kind: 'partition', partition, offset: String(offset) },
});

/** A page reader over `items`, counting the pages read and the most items one read returned. */
function reader(items: StoredBulkItem[]) {
  const stats = { pages: 0, largest: 0 };
  const read = async (after: number, limit: number) => {
    stats.pages++;
    const page = items.filter((i) => i.seq > after).slice(0, limit);
    stats.largest = Math.max(stats.largest, page.length);
    return page;
  };
  return { read, stats };
}

/** Runs the chunks, answering each with how many of its taken ones were moved (`moved(chunk)`). */
async function collect(
  generator: AsyncGenerator<BulkChunk, void, number | undefined>,
  moved: (chunk: BulkChunk) => number = (chunk) => chunk.messages.length,
): Promise<BulkChunk[]> {
  const chunks: BulkChunk[] = [];
  for (let step = await generator.next(); !step.done;) {
    chunks.push(step.value);
    step = await generator.next(moved(step.value));
  }
  return chunks;
}

const indexes = (chunk: BulkChunk) =>
  chunk.messages.map((m) => (m.position.kind === 'queue' ? m.position.index : -1));

describe('bulk chunks', () => {
  it('pages 10,000 RabbitMQ items in chunks of 100, each at the head once the ones before are gone', async () => {
    const items = Array.from({ length: 10_000 }, (_, i) => ({
      seq: i,
      role: 'take' as const,
      status: 'PENDING' as const,
      message: queued(i),
    }));
    const { read, stats } = reader(items);
    const chunks = await collect(bulkChunks('rabbitmq', read));
    expect(chunks).toHaveLength(100);
    expect(chunks.every((c) => c.messages.length === 100)).toBe(true);
    // Every chunk starts at index 0: the 100 × k before it left the queue.
    expect(chunks.map((c) => indexes(c)[0])).toEqual(new Array(100).fill(0));
    expect(indexes(chunks[57])).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(stats.largest).toBeLessThanOrEqual(BULK_PAGE); // one page held at a time
    expect(stats.pages).toBe(10_000 / BULK_PAGE + 1);
  });

  it('shifts a sparse selection by the taken ones gone before it, done items included (a resumed run)', async () => {
    // Planned at indexes 0, 3, 6, …: the others are not selected and stay.
    const items: StoredBulkItem[] = Array.from({ length: 300 }, (_, i) => ({
      seq: i,
      role: 'take',
      status: i < 150 ? 'DONE' : 'PENDING',
      message: queued(i * 3),
    }));
    const chunks = await collect(bulkChunks('rabbitmq', reader(items).read));
    expect(chunks.map((c) => c.messages.length)).toEqual([100, 50]);
    // Item 150 was at 450; 150 taken before it are gone: 300. The next chunk also loses the 100 before it.
    expect(indexes(chunks[0]).slice(0, 3)).toEqual([300, 303, 306]); // within a chunk, as before it
    expect(indexes(chunks[1])[0]).toBe(250 * 3 - 250);
  });

  it('shifts by what actually went: a chunk partly moved leaves the rest where they are', async () => {
    const items: StoredBulkItem[] = Array.from({ length: 150 }, (_, i) => ({
      seq: i,
      role: 'take',
      status: 'PENDING',
      message: queued(i),
    }));
    const chunks = await collect(bulkChunks('rabbitmq', reader(items).read), () => 40);
    expect(indexes(chunks[1])[0]).toBe(100 - 40);
  });

  it('keeps Kafka offsets and cuts chunks by items too, kept records included', async () => {
    const items: StoredBulkItem[] = [];
    let seq = 0;
    for (const partition of [0, 1]) {
      for (let offset = 0; offset < 1_500; offset++) {
        const role = offset % 10 === 0 ? 'take' : 'keep';
        items.push({ seq: seq++, role, status: 'PENDING', message: inPartition(partition, offset) });
      }
    }
    const chunks = await collect(bulkChunks('kafka', reader(items).read));
    expect(chunks.every((c) => c.items.length <= 1_000 && c.messages.length <= 100)).toBe(true);
    expect(chunks.reduce((n, c) => n + c.items.length, 0)).toBe(3_000);
    expect(chunks.reduce((n, c) => n + c.messages.length, 0)).toBe(300);
    expect(chunks[0].messages[1].position).toEqual({ kind: 'partition', partition: 0, offset: '10' });
    expect(chunks[0].kept[0].position).toEqual({ kind: 'partition', partition: 0, offset: '1' });
  });

  it('passes over done items and yields nothing when all are done', async () => {
    const items: StoredBulkItem[] = [0, 1, 2].map((i) => ({
      seq: i,
      role: 'take',
      status: 'DONE',
      message: queued(i),
    }));
    expect(await collect(bulkChunks('rabbitmq', reader(items).read))).toEqual([]);
  });

  it('never shifts below the head', () => {
    expect(shifted(queued(5), 'rabbitmq', 2).position).toEqual({ kind: 'queue', index: 3 });
    expect(shifted(queued(5), 'kafka', 2)).toEqual(queued(5));
    expect(() => shifted(queued(1), 'rabbitmq', 2)).toThrow(RangeError);
  });
});
