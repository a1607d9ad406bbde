import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { useConsumerProcesses } from '../support/consumer-processes';
import { orderMessage } from '../support/raw-messages';

/** The consumer killed mid-batch (SIGKILL) and restarted: every message applied exactly once in effect. */
describe.each(['kafka', 'rabbitmq'] as const)('A consumer killed mid-batch (%s)', (transport) => {
  const suite = useConsumerProcesses(`kill_${transport}`);

  // claim: C-38
  it('applies every message exactly once after a SIGKILL and a restart', async () => {
    const destination = uniqueName(`kill_${transport}`);
    const group = uniqueName('g');
    const env = {
      SCHEMA: suite.schema.name,
      DESTINATION: destination,
      GROUP: group,
      TRANSPORT: transport,
      DELAY_MS: '30',
    };
    const messages = Array.from({ length: 300 }, (_, i) =>
      orderMessage(destination, { customer: `c${i % 6}`, seq: i }),
    );

    await suite.destination(transport, destination, group, 3);
    const first = await suite.start(env);
    await suite.send(transport, messages);

    const count = async () =>
      (
        await suite.schema.query<{ n: string }>(
          'select count(*) as n from handled_orders where consumer_group = $1',
          [group],
        )
      )[0].n;
    await eventually(async () => Number(await count()) >= 60, 60_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\nconsumer log:\n${first.log.slice(-3000)}`);
    });
    await first.kill();
    const atKill = Number(await count());

    await suite.start(env);
    await eventually(async () => expect(Number(await count())).toBe(300), 120_000);

    const rows = await suite.schema.query<{ message_id: string; customer: string; seq: number }>(
      'select message_id, customer, seq from handled_orders where consumer_group = $1 order by id',
      [group],
    );
    expect(new Set(rows.map((r) => r.message_id)).size).toBe(300);
    for (const customer of ['c0', 'c5']) {
      const seqs = rows.filter((r) => r.customer === customer).map((r) => r.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
    console.log(`${transport}: killed after ${atKill} handled; all 300 handled once after the restart`);
  });
});
