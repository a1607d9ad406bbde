import { MessageHeaders } from '../../envelope/message-headers';
import { WireMessage } from '../../envelope/wire-message';
import { isRedriveForAnotherGroup } from '../../failure/redrive-target-group';
import { isMessageId } from '../../envelope/message-id';
import { REPLAY_ID_HEADER, REPLAY_OF_HEADER, replayCopy, replayMessageId } from './replay-copy';

const record = (headers: Record<string, string>): WireMessage => ({
  destination: 'orders',
  key: 'c1',
  headers: { [MessageHeaders.ID]: 'm-1', [MessageHeaders.TYPE]: 'OrderPlaced', ...headers },
  body: Buffer.from('{"seq":1}'),
});
const to = { target: 'orders', group: 'billing', replayId: 'r-1' };

describe(replayCopy.name, () => {
  it('skip: keeps the message id and an empty redrive id, so the inbox key is the one the group recorded', () => {
    const made = replayCopy(record({ 'x-tenant': 't1' }), { ...to, inbox: 'skip' });
    expect(made).toEqual({
      copy: {
        destination: 'orders',
        key: 'c1',
        body: Buffer.from('{"seq":1}'),
        headers: {
          [MessageHeaders.ID]: 'm-1',
          [MessageHeaders.TYPE]: 'OrderPlaced',
          'x-tenant': 't1',
          [MessageHeaders.REDRIVE_ID]: '',
          [MessageHeaders.REDRIVE_GROUP]: 'billing',
          [REPLAY_ID_HEADER]: 'r-1',
        },
      },
    });
  });

  it('skip: a redrive copy of the group keeps its redrive id (the inbox recorded it under that)', () => {
    const made = replayCopy(
      record({ [MessageHeaders.REDRIVE_ID]: 'rd-9', [MessageHeaders.REDRIVE_GROUP]: 'billing' }),
      { ...to, inbox: 'skip' },
    );
    expect('copy' in made && made.copy.headers[MessageHeaders.REDRIVE_ID]).toBe('rd-9');
  });

  it('reprocess: a message id the inbox has not seen, the same each time the replay runs, once per replay', () => {
    const made = replayCopy(record({ [MessageHeaders.REDRIVE_ID]: 'rd-9' }), { ...to, inbox: 'reprocess' });
    if (!('copy' in made)) throw new Error('no copy');
    const id = made.copy.headers[MessageHeaders.ID];
    expect(id).toBe(replayMessageId('r-1', 'm-1'));
    expect(isMessageId(id)).toBe(true);
    expect(id).not.toBe('m-1');
    expect(made.copy.headers[REPLAY_OF_HEADER]).toBe('m-1');
    expect(made.copy.headers[MessageHeaders.REDRIVE_ID]).toBe('r-1');
    const again = replayCopy(record({}), { ...to, inbox: 'reprocess' });
    expect('copy' in again && again.copy.headers[MessageHeaders.ID]).toBe(id);
    const otherReplay = replayCopy(record({}), { ...to, replayId: 'r-2', inbox: 'reprocess' });
    expect('copy' in otherReplay && otherReplay.copy.headers[MessageHeaders.ID]).not.toBe(id);
    expect(replayMessageId('r-1', 'm-2')).not.toBe(id);
  });

  it('reprocess: a copy an earlier replay made maps to the id of its original, so the two apply once', () => {
    const first = replayCopy(record({}), { ...to, inbox: 'reprocess' });
    if (!('copy' in first)) throw new Error('no copy');
    const target = { ...to, replayId: 'r-2', inbox: 'reprocess' as const };
    const ofOriginal = replayCopy(record({}), target);
    const ofCopy = replayCopy(first.copy, target);
    expect('copy' in ofCopy && ofCopy.copy.headers[MessageHeaders.ID]).toBe(replayMessageId('r-2', 'm-1'));
    expect('copy' in ofOriginal && ofOriginal.copy.headers[MessageHeaders.ID]).toBe(
      replayMessageId('r-2', 'm-1'),
    );
    expect('copy' in ofCopy && ofCopy.copy.headers[REPLAY_OF_HEADER]).toBe('m-1');
  });

  it("every copy is skipped by the topic's other groups, in both modes", () => {
    for (const inbox of ['skip', 'reprocess'] as const) {
      const made = replayCopy(record({}), { ...to, inbox });
      if (!('copy' in made)) throw new Error('no copy');
      expect(isRedriveForAnotherGroup(made.copy.headers, 'mail')).toBe(true);
      expect(isRedriveForAnotherGroup(made.copy.headers, 'billing')).toBe(false);
    }
  });

  it('never carries failure headers or a sealed key', () => {
    const made = replayCopy(
      record({
        [MessageHeaders.FAILURE_CODE]: 'X',
        'Msg.Retry-Attempt': '3',
        [MessageHeaders.SEALED_KEY]: 's',
      }),
      { ...to, inbox: 'skip' },
    );
    if (!('copy' in made)) throw new Error('no copy');
    expect(Object.keys(made.copy.headers)).not.toEqual(expect.arrayContaining([MessageHeaders.FAILURE_CODE]));
    expect(Object.keys(made.copy.headers).map((h) => h.toLowerCase())).not.toContain('msg.retry-attempt');
    expect(made.copy.headers[MessageHeaders.SEALED_KEY]).toBeUndefined();
  });

  it('leaves out a redrive copy meant for another group, and a record without a message id', () => {
    const other = record({ [MessageHeaders.REDRIVE_ID]: 'rd-1', [MessageHeaders.REDRIVE_GROUP]: 'mail' });
    expect(replayCopy(other, { ...to, inbox: 'skip' })).toEqual({ skipped: 'OTHER_GROUP' });
    const { [MessageHeaders.ID]: _id, ...noId } = record({}).headers;
    expect(replayCopy({ ...record({}), headers: noId }, { ...to, inbox: 'reprocess' })).toEqual({
      skipped: 'NO_MESSAGE_ID',
    });
  });
});
