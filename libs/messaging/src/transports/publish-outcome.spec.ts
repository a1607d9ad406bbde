import { CONFIRMED, outcomesWithin, PublishOutcome } from './publish-outcome';

describe(outcomesWithin.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers with the outcomes when they come in time', async () => {
    await expect(outcomesWithin(async () => [CONFIRMED], 1, 1_000, 'confirm')).resolves.toEqual([CONFIRMED]);
  });

  it('answers AMBIGUOUS for every message at the deadline, and aborts the publish’s signal', async () => {
    let signal: AbortSignal | undefined;
    const outcomes = outcomesWithin(
      (s) => {
        signal = s;
        return new Promise<PublishOutcome[]>(() => undefined);
      },
      2,
      1_000,
      'broker confirmation',
    );
    await Promise.resolve();
    expect(signal?.aborted).toBe(false);
    jest.advanceTimersByTime(1_000);
    const answered = await outcomes;
    expect(answered.map((o) => o.status)).toEqual(['AMBIGUOUS', 'AMBIGUOUS']);
    expect(answered[0].status !== 'CONFIRMED' && answered[0].error.message).toBe(
      'no broker confirmation within 1000 ms',
    );
    expect(signal?.aborted).toBe(true);
  });

  it('answers AMBIGUOUS when the publish throws instead of answering', async () => {
    const outcomes = await outcomesWithin(
      () => {
        throw new Error('Channel closed');
      },
      1,
      1_000,
      'confirm',
    );
    expect(outcomes[0].status).toBe('AMBIGUOUS');
  });
});
