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
 * `outcomes`, or AMBIGUOUS for each of the `count` messages when no answer came within `timeoutMs`: a
 * publish without an answer may or may not have reached the broker.
 */
export async function outcomesWithin(
  outcomes: Promise<PublishOutcome[]>,
  count: number,
  timeoutMs: number,
  waitingFor: string,
): Promise<PublishOutcome[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<PublishOutcome[]>((resolve) => {
    timer = setTimeout(() => {
      const error = new Error(`no ${waitingFor} within ${timeoutMs} ms`);
      resolve(Array.from({ length: count }, () => ({ status: 'AMBIGUOUS', error })));
    }, timeoutMs);
  });
  try {
    return await Promise.race([outcomes, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
