import { CancelTimer, Clock, systemClock } from '../common/clock';

/**
 * What the broker said about one published message. Only CONFIRMED lets the sender settle (mark an outbox
 * row sent, ack a source message): REJECTED means the broker refused it, AMBIGUOUS that we cannot know (a
 * timeout, a dropped connection) and the message may or may not be there; both leave the source unsettled.
 */
export type PublishOutcome =
  | { readonly status: 'CONFIRMED' }
  | { readonly status: 'REJECTED'; readonly error: Error }
  | { readonly status: 'AMBIGUOUS'; readonly error: Error };

export const CONFIRMED: PublishOutcome = Object.freeze({ status: 'CONFIRMED' });

/**
 * The outcomes `publish` resolves with, or AMBIGUOUS for each of the `count` messages when no answer came
 * within `timeoutMs`: a publish without an answer may or may not have reached the broker. At the deadline
 * the signal given to `publish` aborts, so that what it has not sent yet is not sent later; a `publish` that
 * rejects (it should not) counts as AMBIGUOUS too. The deadline runs on `clock` (the library's injected one
 * where the caller has it).
 */
export async function outcomesWithin(
  publish: (signal: AbortSignal) => Promise<PublishOutcome[]>,
  count: number,
  timeoutMs: number,
  waitingFor: string,
  clock: Pick<Clock, 'setTimeout'> = systemClock,
): Promise<PublishOutcome[]> {
  const ambiguous = (error: Error): PublishOutcome[] =>
    Array.from({ length: count }, () => ({ status: 'AMBIGUOUS', error }));
  const abandon = new AbortController();
  let cancel: CancelTimer | undefined;
  const timeout = new Promise<PublishOutcome[]>((resolve) => {
    cancel = clock.setTimeout(() => {
      resolve(ambiguous(new Error(`no ${waitingFor} within ${timeoutMs} ms`)));
      abandon.abort();
    }, timeoutMs);
  });
  const answered = Promise.resolve()
    .then(() => publish(abandon.signal))
    .catch((error: unknown) => ambiguous(error instanceof Error ? error : new Error(String(error))));
  try {
    return await Promise.race([answered, timeout]);
  } finally {
    cancel?.();
  }
}
