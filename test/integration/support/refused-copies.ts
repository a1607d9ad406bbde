import { TestingModule } from '@nestjs/testing';
import { MESSAGING_TRANSPORT, MessageTransport } from 'nest-reliable-messaging/testing';

/** Counts the dead-letter and retry copies the broker did not confirm (the transport is spied, not replaced). */
export function countRefusedCopies(app: TestingModule): { readonly count: number } {
  const transport = app.get<MessageTransport>(MESSAGING_TRANSPORT);
  const publishCopies = transport.publishCopies.bind(transport);
  const counter = { count: 0 };
  jest.spyOn(transport, 'publishCopies').mockImplementation(async (copies) => {
    const outcomes = await publishCopies(copies);
    counter.count += outcomes.filter((outcome) => outcome.status !== 'CONFIRMED').length;
    return outcomes;
  });
  return counter;
}
