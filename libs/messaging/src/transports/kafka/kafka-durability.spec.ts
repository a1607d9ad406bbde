import { durabilityWarnings } from './kafka-durability';

describe('durabilityWarnings', () => {
  it('is silent on the production shape: RF 3, min.insync.replicas 2', () => {
    expect(durabilityWarnings(3, 3, [{ topic: 'orders', replicas: 3, minInsyncReplicas: 2 }])).toEqual([]);
  });

  it('is silent on a single broker with RF 1 (local development)', () => {
    expect(durabilityWarnings(1, 1, [{ topic: 'orders', replicas: 1, minInsyncReplicas: 1 }])).toEqual([]);
  });

  it('warns about fewer replicas than the options ask for', () => {
    expect(durabilityWarnings(3, 3, [{ topic: 'orders', replicas: 1, minInsyncReplicas: 1 }])).toEqual([
      "topic 'orders' has 1 replica(s), transport.topics.replicationFactor asks for 3",
    ]);
  });

  it('warns about RF 1 on a cluster, even where the options did not ask for more', () => {
    expect(durabilityWarnings(1, 3, [{ topic: 'orders', replicas: 1 }])).toEqual([
      "topic 'orders' has 1 replica on a cluster of 3 brokers",
    ]);
  });

  // claim: C-57
  it('warns about min.insync.replicas 1 on a replicated topic', () => {
    const [warning] = durabilityWarnings(3, 3, [{ topic: 'orders', replicas: 3, minInsyncReplicas: 1 }]);
    expect(warning).toMatch(/min.insync.replicas 1: a write acknowledged by the leader alone is lost/);
  });
});
