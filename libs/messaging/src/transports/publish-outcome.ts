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
