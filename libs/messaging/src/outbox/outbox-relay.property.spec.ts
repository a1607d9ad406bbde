import { Logger } from '@nestjs/common';
import fc from 'fast-check';
import { useQuietWarnings } from '../../spec-support/quiet-warnings';
import { ModelWorldOptions, startModelWorld } from '../../spec-support/model-relays';
import { ScriptedOutcome } from '../../spec-support/relay-journal';
import { ScriptedAnswer } from '../../spec-support/scripted-broker';
import { OutboxRelay } from './outbox-relay';

/** Something that happens between two stretches of time. */
type Step =
  /** An instance commits rows and wakes its own relay (no NOTIFY: the others find them later). */
  | { readonly kind: 'commit'; readonly by: number; readonly count: number; readonly key?: string }
  | { readonly kind: 'wake'; readonly relay: number }
  /** The second relay's process dies: its calls never answer again, its leases run out. */
  | { readonly kind: 'kill' };

/** A run: the relays, the broker's script, the store's latencies, and what happens when. */
interface Scenario {
  readonly world: Omit<ModelWorldOptions, 'latency'> & { readonly latencies: readonly number[] };
  readonly steps: ReadonlyArray<{ readonly afterMs: number; readonly step: Step }>;
}

const outcome = fc.constantFrom<ScriptedOutcome>('confirm', 'reject', 'ambiguous-written', 'ambiguous-lost');
const answer: fc.Arbitrary<ScriptedAnswer> = fc.record({
  outcomes: fc.array(outcome, { minLength: 1, maxLength: 3 }),
  // At once, slow (a good part of the 1 s lease, or past it: the relay gives up at its deadline), or never.
  delayMs: fc.oneof(
    { arbitrary: fc.constant(0), weight: 2 },
    { arbitrary: fc.integer({ min: 300, max: 900 }), weight: 3 },
    { arbitrary: fc.integer({ min: 1, max: 1_500 }), weight: 1 },
    { arbitrary: fc.constant('never' as const), weight: 1 },
  ),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('commit' as const),
    by: fc.integer({ min: 0, max: 1 }),
    count: fc.integer({ min: 1, max: 8 }),
    key: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant('wake' as const), relay: fc.integer({ min: 0, max: 1 }) }),
  fc.constant({ kind: 'kill' as const }),
);
const scenario: fc.Arbitrary<Scenario> = fc.record({
  world: fc.record({
    relays: fc.integer({ min: 1, max: 2 }),
    marksSentBesideClaim: fc.boolean(),
    relay: fc.record({ batchSize: fc.integer({ min: 1, max: 3 }) }),
    script: fc.array(answer, { maxLength: 8 }),
    // Each store call waits before and after its statement, in turn; small beside the lease, as a database is.
    latencies: fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 4 }),
  }),
  steps: fc.array(fc.record({ afterMs: fc.integer({ min: 0, max: 700 }), step }), {
    minLength: 1,
    maxLength: 10,
  }),
});

/**
 * The relay over random interleavings of confirmations, refusals, ambiguous answers, slow and
 * lost answers, one or two relays, a relay dying mid-round (its leases running out), both ways of marking.
 * After the broker heals, every committed row is on the broker and marked sent; throughout, the journal's
 * invariants hold (`relayViolations`: no row published while another copy of it waits for its answer, only
 * confirmed rows marked sent, each key's first copies and counted copies in id order).
 */
describe(`${OutboxRelay.name} (property: random faults, one or two relays)`, () => {
  useQuietWarnings();
  beforeEach(() => jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined));

  it('publishes every committed row at least once, in order per key, each by one relay at a time', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ world: { latencies, ...options }, steps }) => {
        // A clock of its own each run: the previous run's relays, dead ones included, never fire again.
        const world = startModelWorld({ ...options, latency: inTurn(latencies) });
        await world.clock.advance(0);
        for (const { afterMs, step } of steps) {
          await world.clock.advance(afterMs);
          if (step.kind === 'commit') world.commit(step.count, step.key, step.by);
          else if (step.kind === 'wake') world.relays[step.relay]?.wakeup.fire();
          else if (world.relays.length > 1 && world.relays[1].alive) world.relays[1].kill();
        }
        world.broker.healed = true;
        // Leases run out, backoffs end, the safety poll (a minute) comes twice.
        await world.clock.advance(130_000);

        expect(world.violations()).toEqual([]);
        expect(world.store.pending().map((row) => row.id)).toEqual([]);
        const written = new Set(world.broker.written);
        expect(world.store.rows.filter((row) => !written.has(row.messageId)).map((r) => r.id)).toEqual([]);
        await world.stop();
      }),
      { numRuns: Number(process.env.RELAY_PROPERTY_RUNS ?? 300) },
    );
  });
});

/** A latency that takes `delays` in turn. */
function inTurn(delays: readonly number[]): () => number {
  let i = 0;
  return () => delays[i++ % delays.length];
}
