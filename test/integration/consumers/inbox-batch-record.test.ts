import { randomUUID } from 'node:crypto';
import { TestingModule } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource, QueryRunner } from 'typeorm';
import { InboxService, InboxStore } from 'nest-reliable-messaging/testing';
import { createTestDatabase, EACH_DATABASE, TestDatabase } from '../../harness/test-database';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';

/**
 * A consumer batch's inbox records go in at once (`InboxStore.tryRecordAll`): each one told recorded or
 * already there, with its failed attempts, in the order given; a record another transaction holds waits for
 * it. On MySQL/MariaDB one record that is there already sends the batch down the one-by-one path.
 */
describe.each(EACH_DATABASE)('Recording a batch in the inbox (%s)', (_, dialect) => {
  let schema: TestDatabase;
  let app: TestingModule;
  let store: InboxStore;
  let dataSource: DataSource;
  const GROUP = 'billing';

  beforeAll(async () => {
    schema = await createTestDatabase(dialect, 'inbox_batch');
    app = await createMessagingApp({
      schema,
      transport: rabbitTransport(),
      messaging: { relay: { enabled: false } },
    });
    store = app.get(InboxStore);
    dataSource = app.get<DataSource>(getDataSourceToken());
  });

  afterAll(async () => {
    await app.close();
    await schema.drop();
  });

  const record = (messageId = randomUUID(), payloadHash = 'a'.repeat(64), redriveId = '') => ({
    group: GROUP,
    messageId,
    type: 'OrderPlaced',
    payloadHash,
    redriveId,
  });

  /** Runs `work` in a transaction of its own, committed unless `work` throws. */
  async function inTransaction<T>(work: (queryRunner: QueryRunner) => Promise<T>): Promise<T> {
    const queryRunner = dataSource.createQueryRunner();
    await queryRunner.connect();
    await queryRunner.startTransaction();
    try {
      const result = await work(queryRunner);
      await queryRunner.commitTransaction();
      return result;
    } catch (error) {
      await queryRunner.rollbackTransaction();
      throw error;
    } finally {
      await queryRunner.release();
    }
  }

  const recordedIds = async (ids: string[]) =>
    (
      await schema.query<{ message_id: string }>(
        'select message_id from messaging_inbox where consumer_group = $1',
        [GROUP],
      )
    )
      .map((row) => row.message_id.toLowerCase())
      .filter((id) => ids.includes(id))
      .sort();

  // claim: C-39
  it('says for each, in order, whether it was recorded now and how many deliveries failed in place', async () => {
    const [there, failedTwice, failedBeforeRedrive, fresh] = [1, 2, 3, 4].map(() => record());
    await inTransaction((qr) => store.tryRecordAll(qr, [there]));
    await store.recordFailedAttempts(failedTwice, 2);
    await store.recordFailedAttempts({ ...failedBeforeRedrive, redriveId: randomUUID() }, 5);

    const results = await inTransaction((qr) =>
      store.tryRecordAll(qr, [there, failedTwice, failedBeforeRedrive, fresh]),
    );

    expect(results).toEqual([
      { recorded: false, failedBefore: 0 },
      { recorded: true, failedBefore: 2 },
      { recorded: true, failedBefore: 0 }, // counted for another redrive: this copy starts afresh
      { recorded: true, failedBefore: 0 },
    ]);
    const ids = [there, failedTwice, failedBeforeRedrive, fresh].map((r) => r.messageId);
    expect(await recordedIds(ids)).toEqual([...ids].sort());
    // One record alone (a delivery outside a batch) that is there already.
    await expect(inTransaction((qr) => store.tryRecordAll(qr, [fresh]))).resolves.toEqual([
      { recorded: false, failedBefore: 0 },
    ]);
  });

  it('keeps nothing of a batch whose transaction rolls back', async () => {
    const batch = [record(), record()];
    await expect(
      inTransaction(async (qr) => {
        await store.tryRecordAll(qr, batch);
        throw new Error('a handler failed');
      }),
    ).rejects.toThrow('a handler failed');

    const ids = batch.map((r) => r.messageId);
    expect(await recordedIds(ids)).toEqual([]);
    await expect(inTransaction((qr) => store.tryRecordAll(qr, batch))).resolves.toEqual([
      { recorded: true, failedBefore: 0 },
      { recorded: true, failedBefore: 0 },
    ]);
  });

  it('waits for a record another transaction holds, and then sees it there', async () => {
    const held = record();
    const other = record();
    const first = dataSource.createQueryRunner();
    await first.connect();
    await first.startTransaction();
    try {
      await store.tryRecordAll(first, [held]);
      let settled = false;
      const second = inTransaction((qr) => store.tryRecordAll(qr, [other, held])).finally(
        () => (settled = true),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBe(false); // waiting on the first transaction's record
      await first.commitTransaction();
      await expect(second).resolves.toEqual([
        { recorded: true, failedBefore: 0 },
        { recorded: false, failedBefore: 0 },
      ]);
    } finally {
      if (first.isTransactionActive) await first.rollbackTransaction();
      await first.release();
    }
    expect(await recordedIds([held.messageId, other.messageId])).toEqual(
      [held.messageId, other.messageId].sort(),
    );
  });

  // Defect F3: holds() asked with a plain read, which does not see a commit still in progress: "not held",
  // and the failure path could dead-letter a message that then committed.
  it("InboxService.holds() waits for a transaction still committing the message's record, and says held", async () => {
    const inbox = app.get(InboxService);
    const held = record();
    const delivery = {
      group: GROUP,
      envelope: { messageId: held.messageId, type: held.type } as never,
      body: Buffer.from('{}'),
      redriveId: '',
    };
    const committing = dataSource.createQueryRunner();
    await committing.connect();
    await committing.startTransaction();
    try {
      await store.tryRecordAll(committing, [held]);
      let answer: boolean | undefined;
      const asked = inbox.holds(delivery).then((h) => (answer = h));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(answer).toBeUndefined(); // waiting for the transaction that is committing the record
      await committing.commitTransaction();
      await asked;
      expect(answer).toBe(true);
    } finally {
      if (committing.isTransactionActive) await committing.rollbackTransaction();
      await committing.release();
    }
    // The probe left nothing behind: a message never recorded is not held.
    expect(
      await inbox.holds({ ...delivery, envelope: { messageId: randomUUID(), type: 'T' } as never }),
    ).toBe(false);
  });
});
