import { encodeLogicalMessage } from './logical-message-codec';
import { LogicalModel } from '../../../spec-support/model-slot';
import { StreamSession } from './stream-session';

/** Message ids, in the order they were written to the broker. */
const ids = (model: LogicalModel) => model.broker.written;
const parkedIds = (model: LogicalModel) =>
  model.parking.rows.filter((r) => !r.external).map((r) => r.row.messageId);
const lastEnd = (model: LogicalModel) => model.log[model.log.length - 1].endLsn;

/**
 * The logical relay's session over a model slot, a scripted broker and a model outbox table (for parking), on
 * a fake clock: what it publishes, parks and confirms when the broker refuses, never answers, or a process dies.
 */
describe(StreamSession.name, () => {
  describe('a key whose first message the broker refuses and whose second it confirms, in one batch (F2)', () => {
    // Before: the second message counted as done at once, ahead of the first, which was parked alone.
    it('holds the second back behind the first: parked after it, never done before it', async () => {
      const model = new LogicalModel({ relay: { batchSize: 10 } });
      const unbound = model.row('k', 'TypeA');
      const bound = model.row('k', 'TypeB');
      model.broker.refusedMessages.add(unbound.messageId);
      model.commit([unbound, bound]);
      await model.clock.advance(30_000);

      expect(parkedIds(model)).toEqual([unbound.messageId, bound.messageId]);
      expect(model.connection.position).toBe(lastEnd(model));
    });
  });

  describe('a message that is always AMBIGUOUS while the broker answers (F1)', () => {
    // Before: it was retried for ever, held the slot, and everything read after it stayed in memory.
    it('is parked after the park rule, with the later messages of its key; the others go; the slot moves on', async () => {
      const model = new LogicalModel({ relay: { batchSize: 2 } });
      const stuck = model.row('k1');
      const behind = model.row('k1');
      const other = model.row('k2');
      model.broker.ambiguousMessages.add(stuck.messageId);
      model.commit([stuck]);
      model.commit([behind]);
      model.commit([other]);
      await model.clock.advance(120_000);

      expect(parkedIds(model)).toEqual([stuck.messageId, behind.messageId]);
      expect(ids(model)).toContain(other.messageId);
      expect(ids(model)).not.toContain(stuck.messageId);
      expect(model.connection.position).toBe(lastEnd(model));
    });

    // Before: the pause counted only messages not done; done ones behind the stuck one, and transactions
    // without messages, piled up unseen.
    // claim: C-91
    it('stops reading once what is held in memory reaches the limit, counting done messages and empty transactions', async () => {
      const model = new LogicalModel({ relay: { batchSize: 2 } }); // the limit: 20
      const stuck = model.row('k0');
      model.broker.ambiguousMessages.add(stuck.messageId);
      model.commit([stuck]);
      for (let i = 1; i <= 30; i++) {
        model.commit([]);
        model.commit([model.row(`k${i}`)]);
      }
      await model.clock.advance(0);
      expect(model.connection.pauses).toBeGreaterThan(0);

      await model.clock.advance(120_000);
      expect(parkedIds(model)).toEqual([stuck.messageId]);
      expect(ids(model)).toHaveLength(30);
      expect(model.connection.position).toBe(lastEnd(model));
    });
  });

  describe('a poll-mode writer during a rolling change of mode (F4)', () => {
    // Before: the pending keys were read once at the start and never again while none was parked.
    it('parks a message of a key with a pending row that appeared after the session started, behind that row', async () => {
      const model = new LogicalModel();
      await model.clock.advance(0);
      model.parking.addExternal(model.row('k'));
      await model.clock.advance(1_500);
      const later = model.row('k');
      model.commit([later]);
      await model.clock.advance(1_500);

      expect(ids(model)).not.toContain(later.messageId);
      expect(parkedIds(model)).toEqual([later.messageId]);
    });
  });

  describe('content under our prefix that does not decode (F8)', () => {
    // Before: it was logged, skipped and confirmed past.
    it('is parked, never skipped, before the slot moves past it', async () => {
      const model = new LogicalModel();
      model.commit([{ raw: Buffer.from('{"v":99}\n{}') }]);
      await model.clock.advance(1_000);

      expect(model.parking.rows).toHaveLength(1);
      expect(model.parking.rows[0].error).toMatch(/UNDECODABLE/);
      expect(model.connection.position).toBe(lastEnd(model));
    });
  });

  describe('a round listener that throws (F10)', () => {
    // Before: the tracked work had no rejection handler, and Node ends a process on an unhandled rejection.
    it('is logged, not an unhandled rejection', async () => {
      const unhandled: unknown[] = [];
      const listener = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', listener);
      try {
        const model = new LogicalModel();
        model.reportThrows = true;
        model.commit([model.row('k')]);
        await model.clock.advance(1_000);
        await new Promise((resolve) => setImmediate(resolve));
        expect(unhandled).toEqual([]);
        expect(model.errors.join('\n')).toContain('a round listener threw');
      } finally {
        process.off('unhandledRejection', listener);
      }
    });
  });

  describe("Debezium's traps", () => {
    it('a crash between publishing and confirming the position: the messages go again, none is lost', async () => {
      const model = new LogicalModel();
      const first = model.row('k');
      model.connection.confirm = () => undefined; // the status update never leaves
      model.commit([first]);
      await model.clock.advance(1_000);
      expect(ids(model)).toEqual([first.messageId]);

      model.crash();
      const second = model.row('k');
      model.commit([second]);
      await model.clock.advance(1_000);
      expect(ids(model)).toEqual([first.messageId, first.messageId, second.messageId]);
      expect(model.connection.position).toBe(lastEnd(model));
    });

    it('the last record a message: confirmed once done, not read again after a restart', async () => {
      const model = new LogicalModel();
      const only = model.row('k');
      model.commit([only]);
      await model.clock.advance(1_000);
      model.keepalive();
      model.crash();
      await model.clock.advance(1_000);
      expect(ids(model)).toEqual([only.messageId]);
    });

    it('a transaction with many messages of interleaved keys: each key in order, the position after the last', async () => {
      const model = new LogicalModel({
        relay: { batchSize: 3 },
        script: [
          { outcomes: ['confirm', 'reject', 'ambiguous-written'], delayMs: 0 },
          { outcomes: ['ambiguous-lost', 'confirm'], delayMs: 50 },
        ],
      });
      const rows = Array.from({ length: 30 }, (_, i) => model.row(`k${i % 4}`));
      model.commit(rows.slice(0, 20));
      model.commit([]);
      model.commit(rows.slice(20));
      await model.clock.advance(60_000);

      const written = ids(model);
      const sent = model.broker.calls.flatMap((call) => call.messageIds);
      for (const row of rows) expect(written).toContain(row.messageId);
      for (let k = 0; k < 4; k++) {
        const ofKey = rows.filter((r) => r.key === `k${k}`).map((r) => r.messageId);
        // The first copies leave in order (one that fails holds back those of its key behind it).
        expect([...new Set(sent.filter((id) => ofKey.includes(id)))]).toEqual(ofKey);
      }
      expect(model.connection.position).toBe(lastEnd(model));
    });

    it('a non-transactional message under our prefix: skipped and said, the transactions around it go', async () => {
      const model = new LogicalModel();
      const before = model.row('k');
      const stray = model.row('k');
      const after = model.row('k');
      model.commit([before]);
      model.commit([{ raw: Buffer.from(encodeLogicalMessage(stray)), transactional: false }, after]);
      await model.clock.advance(1_000);

      expect(ids(model)).toEqual([before.messageId, after.messageId]);
      expect(model.errors.join('\n')).toMatch(/non-transactional/);
      expect(model.connection.position).toBe(lastEnd(model));
    });
  });
});
