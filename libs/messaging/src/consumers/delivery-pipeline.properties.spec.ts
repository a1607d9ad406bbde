import fc from 'fast-check';
import { PublishOutcome } from '../transports/publish-outcome';
import { RetryMode, RetryOrdering, RetryPolicyOptions } from '../retry/retry-policy.interface';
import { OffsetTracker } from '../transports/kafka/offset-tracker';
import { Settlement } from '../transports/delivery-contract';
import { TransportCapabilities } from '../retry/transport-capabilities';
import { DeliveryPipeline } from './delivery-pipeline';
import { useQuietWarnings } from '../../spec-support/quiet-warnings';
import { MessageHeaders } from '../envelope/message-headers';
import {
  CommitAnswer,
  DESTINATION,
  FakeInbox,
  FakeManager,
  Flaky,
  Harness,
  idOf,
  KAFKA,
  orderWire,
  RABBITMQ,
  uniqueViolation,
} from '../../spec-support/pipeline-harness';

/**
 * What a handler does on one call: succeeds, throws, swallows an error that ended its transaction (seen or
 * not), or meets the database going away under it (BREAK: it throws, and the rollback finds the connection
 * broken).
 */
type Behaviour = 'OK' | 'THROW' | 'SWALLOW' | 'SWALLOW_UNSEEN' | 'BREAK';

/**
 * What a message is: one the handler takes, one of a type the group has no handler for (settled unhandled),
 * or one of a newer event version than the consumer knows (held, then dead-lettered).
 */
type Kind = 'GOOD' | 'UNHANDLED' | 'TOO_NEW';

/** One random run: a lane of one key, what each handler call does, how the database and broker answer. */
interface Scenario {
  readonly lane: number;
  /** Positions of the lane whose message the inbox has already (a redelivery). */
  readonly handledBefore: readonly number[];
  readonly batchSize: number;
  readonly broker: 'KAFKA' | 'RABBITMQ';
  readonly policy: RetryPolicyOptions | null;
  /** Per position, what its handler's calls do in turn (OK once the list runs out). */
  readonly behaviours: ReadonlyArray<readonly Behaviour[]>;
  readonly commits: readonly CommitAnswer[];
  /** How the transactions' begins answer, in turn (FAIL: the database is away); OK once it runs out. */
  readonly begins: ReadonlyArray<'OK' | 'FAIL'>;
  readonly copies: ReadonlyArray<PublishOutcome['status']>;
  /** The consumer stops after this many handler calls (undefined: never). */
  readonly stopAfterCalls: number | undefined;
  /** Per position, what the message is; all GOOD when absent. */
  readonly kinds?: readonly Kind[];
}

const BACKOFF = { initialDelayMs: 10, multiplier: 2, maxDelayMs: 40 };

const policies: fc.Arbitrary<RetryPolicyOptions | null> = fc.oneof(
  fc.constant(null),
  fc.record({
    maxAttempts: fc.integer({ min: 1, max: 4 }),
    mode: fc.constantFrom(...Object.values(RetryMode)),
    ordering: fc.constantFrom(...Object.values(RetryOrdering)),
    backoff: fc.constant(BACKOFF),
  }),
);

const scenarios: fc.Arbitrary<Scenario> = fc.integer({ min: 1, max: 6 }).chain((lane) =>
  fc.record({
    lane: fc.constant(lane),
    handledBefore: fc.subarray([...Array(lane).keys()]),
    batchSize: fc.integer({ min: 1, max: 4 }),
    broker: fc.constantFrom('KAFKA' as const, 'RABBITMQ' as const),
    policy: policies,
    behaviours: fc.array(
      fc.array(fc.constantFrom<Behaviour>('OK', 'OK', 'THROW', 'SWALLOW', 'SWALLOW_UNSEEN', 'BREAK'), {
        maxLength: 5,
      }),
      { minLength: lane, maxLength: lane },
    ),
    commits: fc.array(fc.constantFrom<CommitAnswer>('OK', 'OK', 'FAIL', 'LOST'), { maxLength: 6 }),
    begins: fc.array(fc.constantFrom<'OK' | 'FAIL'>('OK', 'OK', 'FAIL'), { maxLength: 8 }),
    copies: fc.array(fc.constantFrom<PublishOutcome['status']>('CONFIRMED', 'REJECTED', 'AMBIGUOUS'), {
      maxLength: 4,
    }),
    stopAfterCalls: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
    kinds: fc.array(fc.constantFrom<Kind>('GOOD', 'GOOD', 'GOOD', 'GOOD', 'UNHANDLED', 'TOO_NEW'), {
      minLength: lane,
      maxLength: lane,
    }),
  }),
);

/** A short hold, so that a held message reaches its dead letter within a run. */
const HOLD = { windowMs: 300, initialDelayMs: 10, maxDelayMs: 40 };

/** What a run left: the settlements, and everything the fakes saw. */
interface Run {
  readonly scenario: Scenario;
  readonly ids: readonly string[];
  readonly settled: readonly Settlement[];
  readonly harness: Harness;
  readonly inbox: FakeInbox;
  /** After-commit callbacks that ran, as `<id>#<call>`. */
  readonly callbacks: readonly string[];
}

async function run(scenario: Scenario): Promise<Run> {
  const wires = Array.from({ length: scenario.lane }, (_, i) => {
    const payload = { orderId: i + 1, customer: 'k' };
    const kind = scenario.kinds?.[i] ?? 'GOOD';
    if (kind === 'UNHANDLED') return orderWire(payload, {}, DESTINATION, 'OrderShipped');
    return orderWire(payload, kind === 'TOO_NEW' ? { [MessageHeaders.EVENT_VERSION]: '2' } : {});
  });
  const ids = wires.map(idOf);
  const inbox = new FakeInbox();
  for (const at of scenario.handledBefore) inbox.handled.add(ids[at]);
  inbox.commitAnswers.push(...scenario.commits);
  inbox.beginAnswers.push(...scenario.begins);
  const capabilities: TransportCapabilities = scenario.broker === 'KAFKA' ? KAFKA : RABBITMQ;
  const harness = new Harness({
    inbox,
    capabilities,
    batchSize: scenario.batchSize,
    policy: scenario.policy ?? undefined,
    consumers: { versionHold: HOLD },
  });
  harness.answers.push(...scenario.copies);
  const callbacks: string[] = [];
  harness.onCall = (context) => {
    const call = harness.callsOf(context.messageId).length;
    if (scenario.stopAfterCalls !== undefined && harness.calls.length >= scenario.stopAfterCalls) {
      harness.stopping = true;
    }
    const manager = context.manager as unknown as FakeManager;
    manager.afterCommit.push(() => callbacks.push(`${context.messageId}#${call}`));
    const behaviour = scenario.behaviours[ids.indexOf(context.messageId)][call - 1] ?? 'OK';
    if (behaviour === 'THROW') throw new Flaky('downstream flaked');
    if (behaviour === 'BREAK') {
      inbox.rollbackAnswers.push('BROKEN');
      throw new Error('Connection terminated unexpectedly');
    }
    if (behaviour === 'SWALLOW') manager.swallow(uniqueViolation());
    if (behaviour === 'SWALLOW_UNSEEN') manager.swallow(uniqueViolation(), false);
  };
  const settled = await harness.withTimePassing(harness.handleBatch(wires), 50);
  return { scenario, ids, settled, harness, inbox, callbacks };
}

/** True when the message is final: applied, moved away by a copy the broker confirmed, or of a type the group does not handle. */
function resolved({ inbox, harness, scenario, ids }: Run, id: string): boolean {
  if (scenario.kinds?.[ids.indexOf(id)] === 'UNHANDLED') return true;
  return inbox.handled.has(id) || harness.confirmed.some((copy) => idOf(copy) === id);
}

/** Every invariant of the consumer's batch settlement; throws naming the first one broken. */
function checkInvariants(result: Run): void {
  const { ids, settled, inbox, harness, scenario, callbacks } = result;
  const handledBefore = new Set(scenario.handledBefore.map((at) => ids[at]));
  const kindOf = (id: string): Kind => scenario.kinds?.[ids.indexOf(id)] ?? 'GOOD';

  // A message of a type the group does not handle, or of a newer version, never reaches a handler.
  for (const id of ids.filter((id) => kindOf(id) !== 'GOOD')) {
    expect({ id, calls: harness.callsOf(id).length, applied: inbox.applied.includes(id) }).toEqual({
      id,
      calls: 0,
      applied: false,
    });
  }
  // One of an unhandled type is settled without a copy; one of a newer version leaves by its dead letter only.
  for (const copy of harness.copies) {
    expect({ id: idOf(copy), kind: kindOf(idOf(copy)) }).not.toEqual({ id: idOf(copy), kind: 'UNHANDLED' });
    if (kindOf(idOf(copy)) === 'TOO_NEW') expect(copy.destination.endsWith('.dlq')).toBe(true);
  }

  // Nothing is acked without its writes committed or its copy confirmed (publish, confirm, then settle).
  settled.forEach((settlement, i) => {
    if (settlement.kind === 'ACK')
      expect({ id: ids[i], resolved: resolved(result, ids[i]) }).toEqual({ id: ids[i], resolved: true });
  });
  // After a PAUSE or a LEAVE, nothing more is settled: the stream resumes there.
  const stop = settled.findIndex((s) => s.kind === 'PAUSE' || s.kind === 'LEAVE');
  if (stop >= 0) expect(settled.slice(stop + 1).every((s) => s.kind === 'LEAVE')).toBe(true);

  // Kafka commits the contiguous run of settled offsets: nothing in it is unfinished.
  const tracker = new OffsetTracker();
  ids.forEach((_, i) => tracker.dispatch(String(i)));
  settled.forEach((s, i) => (s.kind === 'ACK' || s.kind === 'DROP') && tracker.settle(String(i)));
  const committable = Number(tracker.committable() ?? -1);
  for (let i = 0; i <= committable; i++) expect(resolved(result, ids[i])).toBe(true);

  // A message applied is never dead-lettered (a commit whose answer was lost did commit).
  const deadLettered = harness.confirmed.filter((copy) => copy.destination.endsWith('.dlq')).map(idOf);
  for (const id of deadLettered)
    expect({ id, applied: inbox.applied.includes(id) }).toEqual({ id, applied: false });

  // Each message is applied at most once, and never one the inbox had already.
  expect(new Set(inbox.applied).size).toBe(inbox.applied.length);
  for (const id of inbox.applied) expect(handledBefore.has(id)).toBe(false);

  // A key's messages are final in their order: one is never applied or moved on before an earlier one.
  const firstAt = (id: string) => inbox.log.findIndex((entry) => entry.endsWith(`:${id}`));
  // (A message of an unhandled type is final when it is acked, with nothing to apply: it is left out.)
  for (let j = 0; j < ids.length; j++) {
    if (handledBefore.has(ids[j]) || firstAt(ids[j]) < 0) continue;
    for (let i = 0; i < j; i++) {
      if (handledBefore.has(ids[i]) || kindOf(ids[i]) === 'UNHANDLED') continue;
      expect({
        earlier: i,
        later: j,
        earlierFirst: firstAt(ids[i]) >= 0 && firstAt(ids[i]) < firstAt(ids[j]),
      }).toEqual({
        earlier: i,
        later: j,
        earlierFirst: true,
      });
    }
  }

  // A handler runs at most twice because of neighbours; any other run has a cause of its own.
  for (const id of ids) {
    const neighbours = inbox.neighbourRollbacks.get(id) ?? 0;
    expect({ id, neighbours }).toEqual({ id, neighbours: Math.min(neighbours, 1) });
    const causes = 1 + neighbours + (inbox.ownFailures.get(id) ?? 0) + (inbox.commitFailures.get(id) ?? 0);
    expect(harness.callsOf(id).length).toBeLessThanOrEqual(causes);
  }

  // After-commit callbacks: never for a try that did not commit, never twice; once for a message applied and
  // acked without a copy (a lost commit answer included: the inbox showed the commit on the next try).
  for (const [i, id] of ids.entries()) {
    const ran = callbacks.filter((c) => c.startsWith(`${id}#`));
    expect(ran.length).toBeLessThanOrEqual(1);
    if (ran.length > 0) expect(inbox.applied).toContain(id);
    const copied = harness.confirmed.some((copy) => idOf(copy) === id);
    if (settled[i].kind === 'ACK' && inbox.applied.includes(id) && !copied) expect(ran).toHaveLength(1);
  }
}

/**
 * The consumer's batch settlement over random lanes and random interleavings of handler
 * successes, throws and swallowed database errors (seen by the watch, or only at COMMIT), commits that
 * fail or whose answer is lost after they committed, transactions that cannot begin, inbox duplicates,
 * refused and ambiguous copies, and stop requests; with messages of types the group does not handle and of
 * event versions newer than it knows (held, then dead-lettered) among them.
 */
describe(`${DeliveryPipeline.name} (properties)`, () => {
  useQuietWarnings();

  // claim: C-40
  it('settles nothing before it is final, applies each message once and in order, and runs no handler a third time because of neighbours', async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async (scenario) => checkInvariants(await run(scenario))),
      { numRuns: 300 },
    );
  }, 60_000);

  describe('plain cases', () => {
    it('leaves a message of an unhandled type that comes after a delivery a stop left (a CI run found it)', async () => {
      // Shrunk by fast-check (seed -394458055) in the CI of 12e0ff8: a stop during a RabbitMQ batch of three,
      // the third of a type the group does not handle.
      const result = await run({
        lane: 5,
        handledBefore: [],
        batchSize: 3,
        broker: 'RABBITMQ',
        policy: {
          maxAttempts: 2,
          mode: RetryMode.BROKER_DELAYED,
          ordering: RetryOrdering.PRESERVE,
          backoff: BACKOFF,
        },
        behaviours: [['SWALLOW'], [], [], [], []],
        commits: [],
        begins: [],
        copies: [],
        stopAfterCalls: 2,
        kinds: ['GOOD', 'GOOD', 'UNHANDLED', 'GOOD', 'GOOD'],
      });
      expect(result.settled.map((s) => s.kind)).toEqual(['ACK', 'LEAVE', 'LEAVE', 'LEAVE', 'LEAVE']);
      checkInvariants(result);
    });

    // claim: C-37
    it('drops the callbacks of a try that did not commit once a later try runs the handler (no commit before it)', async () => {
      // Shrunk by fast-check from a failure of this branch's first version (it ran both tries' callbacks).
      // The first commit fails, the one after it commits but its answer is lost, the inline retry finds the
      // message handled: only the callbacks of the try that committed may run.
      const result = await run({
        lane: 1,
        handledBefore: [],
        batchSize: 1,
        broker: 'KAFKA',
        policy: {
          maxAttempts: 2,
          mode: RetryMode.INLINE,
          ordering: RetryOrdering.ALLOW_REORDER,
          backoff: BACKOFF,
        },
        behaviours: [[]],
        commits: ['FAIL', 'LOST'],
        begins: [],
        copies: [],
        stopAfterCalls: undefined,
      });
      checkInvariants(result);
      expect(result.callbacks).toEqual([`${result.ids[0]}#2`]);
    });

    // claim: C-37
    it('keeps the callbacks of a batch whose commit answer was lost when one goes again alone and its answer is lost too', async () => {
      const result = await run({
        lane: 2,
        handledBefore: [],
        batchSize: 2,
        broker: 'KAFKA',
        policy: {
          maxAttempts: 3,
          mode: RetryMode.INLINE,
          ordering: RetryOrdering.ALLOW_REORDER,
          backoff: BACKOFF,
        },
        behaviours: [[], []],
        commits: ['LOST', 'LOST'],
        begins: [],
        copies: [],
        stopAfterCalls: undefined,
      });
      checkInvariants(result);
      expect(result.settled.map((s) => s.kind)).toEqual(['ACK', 'ACK']);
      expect(result.callbacks).toEqual(result.ids.map((id) => `${id}#1`));
    });
  });
});
