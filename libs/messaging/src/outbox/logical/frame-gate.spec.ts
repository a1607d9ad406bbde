import { FrameGate } from './frame-gate';

describe(FrameGate.name, () => {
  const frames = (...names: string[]) => names.map((name) => Buffer.from(name));

  it('delivers frames as they come while reading', () => {
    const seen: string[] = [];
    const gate = new FrameGate((frame) => seen.push(frame.toString()));
    frames('a', 'b').forEach((frame) => gate.push(frame));
    expect(seen).toEqual(['a', 'b']);
    expect(gate.waiting).toBe(0);
  });

  it('holds the rest of a read once a delivery pauses, and delivers them in order on resume', () => {
    const seen: string[] = [];
    const gate = new FrameGate((frame) => {
      seen.push(frame.toString());
      if (frame.toString() === 'commit-1') gate.pause(); // the limit reached by this transaction
    });
    // One socket read: pg emits its frames one after the other, synchronously.
    frames('begin-1', 'commit-1', 'begin-2', 'commit-2', 'keepalive').forEach((frame) => gate.push(frame));
    expect(seen).toEqual(['begin-1', 'commit-1']);
    expect(gate.waiting).toBe(3);

    expect(gate.resume()).toBe(true);
    expect(seen).toEqual(['begin-1', 'commit-1', 'begin-2', 'commit-2', 'keepalive']);
    expect(gate.waiting).toBe(0);
  });

  it('stops delivering when a held frame pauses again, and keeps the order of frames that come meanwhile', () => {
    const seen: string[] = [];
    let pauseOn = 'commit-1';
    const gate = new FrameGate((frame) => {
      seen.push(frame.toString());
      if (frame.toString() === pauseOn) gate.pause();
    });
    frames('commit-1', 'commit-2', 'commit-3').forEach((frame) => gate.push(frame));
    pauseOn = 'commit-2';
    expect(gate.resume()).toBe(false); // paused again by commit-2: the socket stays paused
    expect(seen).toEqual(['commit-1', 'commit-2']);
    gate.push(Buffer.from('commit-4')); // cannot pass commit-3
    expect(gate.resume()).toBe(true);
    expect(seen).toEqual(['commit-1', 'commit-2', 'commit-3', 'commit-4']);
  });
});
