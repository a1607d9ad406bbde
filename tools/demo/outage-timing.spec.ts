import { outageTimings } from './outage-timing';

describe(outageTimings.name, () => {
  const moments = {
    stopIssuedAt: 1_000,
    stoppedAt: 3_210,
    startIssuedAt: 10_000,
    servingAt: 20_140,
    lastNotifiedAt: 20_500,
  };

  it('times the stop and the start by their commands', () => {
    expect(outageTimings(moments)).toMatchObject({ stopMs: 2_210, startMs: 10_140 });
  });

  it('times "broker restart → full delivery" from the start command', () => {
    expect(outageTimings(moments).toFullDeliveryMs).toBe(10_500);
  });

  it('is never negative when delivery finished before the start command returned', () => {
    // RabbitMQ: the consumer reconnects while `rabbitmqctl start_app` is still waiting for the node.
    const early = { ...moments, servingAt: 20_584, lastNotifiedAt: 20_000 };
    expect(outageTimings(early).toFullDeliveryMs).toBe(10_000);
  });

  it('is 0 when everything was delivered before the start command (--cluster: one node of three was down)', () => {
    const served = { ...moments, lastNotifiedAt: 8_000 };
    expect(outageTimings(served).toFullDeliveryMs).toBe(0);
  });
});
