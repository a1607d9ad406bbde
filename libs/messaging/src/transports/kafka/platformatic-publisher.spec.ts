import { MultipleErrors, NetworkError, ProtocolError, TimeoutError, UserError } from '@platformatic/kafka';
import { platformaticFailure } from './platformatic-publisher';

describe(platformaticFailure.name, () => {
  const failedSend = (...errors: Error[]) => new MultipleErrors('Producing messages failed.', errors);

  it.each([
    [
      'a broker refusal that no retry changes (too large)',
      failedSend(new ProtocolError('MESSAGE_TOO_LARGE')),
    ],
    ['not authorised', failedSend(new ProtocolError('TOPIC_AUTHORIZATION_FAILED'))],
    ['a message the client could not serialise', new UserError('Failed to serialize a message.')],
  ])('is REJECTED for %s', (_, error) => {
    expect(platformaticFailure(error).status).toBe('REJECTED');
  });

  it.each([
    ['a dropped connection', failedSend(new NetworkError('Connection closed'))],
    ['a timeout', new TimeoutError('Request timed out')],
    ['a retriable broker error (not the leader)', failedSend(new ProtocolError('NOT_LEADER_OR_FOLLOWER'))],
    [
      'a refusal beside a timeout (one may have been written)',
      failedSend(new ProtocolError('MESSAGE_TOO_LARGE'), new TimeoutError('Request timed out')),
    ],
    ['anything else', new Error('boom')],
  ])('is AMBIGUOUS for %s', (_, error) => {
    expect(platformaticFailure(error).status).toBe('AMBIGUOUS');
  });

  it("says what the broker answered, not only the client's summary", () => {
    const error = failedSend(new MultipleErrors('Produce failed.', [new ProtocolError('MESSAGE_TOO_LARGE')]));
    const { error: described } = platformaticFailure(error);
    expect(described.message).toMatch(/^Producing messages failed\. MESSAGE_TOO_LARGE: /);
    expect(described.cause).toBe(error);
  });
});
