import { FakeClock } from '../common/fake-clock';
import { ConsumersStillJoiningError } from '../errors/consumers-still-joining.error';
import { MessageTransport } from '../transports/message-transport.interface';
import { MessagingStatus } from './messaging-status';
import { RunningConsumers } from './observed-sources';

class Consumers extends RunningConsumers {
  joining = ['billing', 'shipping'];
  runningGroups(): string[] {
    return [];
  }
  joiningGroups(): string[] {
    return [...this.joining];
  }
}

const transport = { kind: 'kafka', health: () => ({ connected: true }) } as unknown as MessageTransport;

describe(MessagingStatus.name, () => {
  it('consumersJoined() resolves once no group is joining, and not before', async () => {
    const clock = new FakeClock();
    const consumers = new Consumers();
    const status = new MessagingStatus(transport, consumers, clock);
    let joined = false;
    const waiting = status.consumersJoined(5_000).then(() => (joined = true));
    await clock.advance(1_000);
    expect(joined).toBe(false);
    consumers.joining = ['shipping'];
    await clock.advance(1_000);
    expect(joined).toBe(false);
    consumers.joining = [];
    await clock.advance(100);
    await waiting;
    expect(joined).toBe(true);
  });

  it('consumersJoined() rejects after its timeout naming the groups still joining', async () => {
    const clock = new FakeClock();
    const consumers = new Consumers();
    const status = new MessagingStatus(transport, consumers, clock);
    consumers.joining = ['shipping'];
    const waiting = status.consumersJoined(2_000);
    const outcome = waiting.catch((error: unknown) => error);
    await clock.advance(2_100);
    const error = await outcome;
    expect(error).toBeInstanceOf(ConsumersStillJoiningError);
    expect(error).toMatchObject({ groups: ['shipping'], timeoutMs: 2_000 });
    expect((error as Error).message).toBe('Consumer groups still joining after 2000 ms: shipping');
  });

  it('consumersJoined() resolves at once when every group has joined', async () => {
    const consumers = new Consumers();
    consumers.joining = [];
    await expect(new MessagingStatus(transport, consumers, new FakeClock()).consumersJoined()).resolves.toBe(
      undefined,
    );
  });
});
