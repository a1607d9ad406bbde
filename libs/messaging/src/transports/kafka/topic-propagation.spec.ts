import { FakeClock } from '../../common/fake-clock';
import { onceTopicsPropagated, TOPIC_PROPAGATION_MS } from './topic-propagation';

const unknownTopic = () =>
  Object.assign(new Error('This server does not host this topic-partition'), {
    type: 'UNKNOWN_TOPIC_OR_PARTITION',
  });

describe('onceTopicsPropagated', () => {
  let clock: FakeClock;
  beforeEach(() => {
    clock = new FakeClock();
  });

  it('asks again while a broker does not know the new topic yet', async () => {
    const answers = [unknownTopic(), unknownTopic()];
    const work = jest.fn(async () => {
      const error = answers.shift();
      if (error) throw error;
      return 'configs';
    });
    const result = onceTopicsPropagated(clock, work);
    await clock.advance(1_000);
    await expect(result).resolves.toBe('configs');
    expect(work).toHaveBeenCalledTimes(3);
  });

  it('throws any other failure at once', async () => {
    const denied = Object.assign(new Error('denied'), { type: 'TOPIC_AUTHORIZATION_FAILED' });
    const work = jest.fn(() => Promise.reject(denied));
    await expect(onceTopicsPropagated(clock, work)).rejects.toBe(denied);
    expect(work).toHaveBeenCalledTimes(1);
  });

  it('gives up once the topic stayed unknown for the whole propagation time', async () => {
    const work = jest.fn(() => Promise.reject(unknownTopic()));
    const result = onceTopicsPropagated(clock, work);
    const failed = expect(result).rejects.toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION' });
    await clock.advance(TOPIC_PROPAGATION_MS + 1_000);
    await failed;
  });
});
