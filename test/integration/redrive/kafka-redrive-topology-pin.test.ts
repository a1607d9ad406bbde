import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RedriveService } from 'nest-reliable-messaging/redrive';
import { CliIo, parseKeySecret, runMessagingCli } from 'nest-reliable-messaging/testing';
import { LOCAL_KEY_SECRET } from '../../../tools/infra/local-secrets';
import { infraEnv } from '../../harness/infra';
import { uniqueName } from '../../harness/names';
import { useKafkaRedriveSuite } from './support/kafka-redrive-suite';
import { parkedOrder } from './support/parked-messages';

/**
 * Issue 45, finding 14 on Kafka: `<x>.orders.billing.dlq` reads as `billing` of `<x>.orders` or as
 * `orders.billing` of `<x>`, so its target topic comes from the topology. A record planted with the origin
 * `<x>` and an admin's own topology file that reads the name the second way would send it into `<x>`; once
 * the reviewed topology is pinned in the admin database, a service with any other topology is refused.
 */
describe('The pinned topology on Kafka (issue 45, finding 14)', () => {
  const suite = useKafkaRedriveSuite('pin_kafka');
  const { topics, raw, admin } = suite;
  let folder: string;

  beforeAll(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'kafka-topology-pin-'));
  });

  afterAll(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  const total = async (topic: string) =>
    (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);

  it('refuses to plan with an edited topology that reads a route-ambiguous DLQ the other way', async () => {
    const { fixture } = suite.ready();
    const x = uniqueName('pin_k');
    const reviewed = {
      destinations: [`${x}.orders`],
      groups: [{ group: 'billing', destination: `${x}.orders` }],
    };
    const theirs = { destinations: [x], groups: [{ group: 'orders.billing', destination: x }] };
    const dlq = await topics.create(`${x}.orders.billing.dlq`, 1);
    await topics.create(`${x}.orders`, 1);
    const other = await topics.create(x, 1);
    // Planted by someone who may write the DLQ: a record that says it failed in `<x>`.
    await raw.send([parkedOrder(x, 'orders.billing', 1)], 0);
    expect(await total(dlq)).toBe(1);

    writeFileSync(path.join(folder, 'reviewed.json'), JSON.stringify(reviewed));
    let err = '';
    const io: CliIo = { env: fixture.cliEnv, out: () => undefined, err: (t) => void (err += t), cwd: folder };
    const pinned = await runMessagingCli(['db', 'pin-topology', '--topology', 'reviewed.json'], io);
    expect(err).toBe('');
    expect(pinned).toBe(0);

    const planner = (topology: unknown) =>
      new RedriveService({
        broker: { kind: 'kafka', brokers: infraEnv().kafkaBrokers, allowPlaintextLocal: true },
        credential: { principal: 'redrive-admin', secret: 'test-secret' },
        ledger: fixture.ledger,
        approvers: fixture.approvers,
        topology: topology as never,
        keySecret: parseKeySecret(LOCAL_KEY_SECRET, 'LOCAL_KEY_SECRET'),
      });
    const edited = planner(theirs);
    try {
      await expect(edited.plan({ source: dlq })).rejects.toThrow(
        /topology in use .* is not the reviewed one the admin database pins/,
      );
    } finally {
      await edited.close();
    }
    const refusals = (await fixture.history(dlq)).filter((e) => e.action === 'REFUSE');
    expect(refusals.map((e) => e.outcome)).toEqual(['TOPOLOGY_NOT_PINNED']);
    expect((await fixture.history(dlq)).filter((e) => e.action === 'PLAN')).toEqual([]);

    // With the reviewed topology the planted record is refused for what it is: it did not fail in `<x>.orders`.
    const honest = planner(reviewed);
    try {
      await expect(honest.plan({ source: dlq })).rejects.toThrow(/msg\.origin-destination is not/);
    } finally {
      await honest.close();
    }
    expect(await total(other)).toBe(0);
    expect(await total(dlq)).toBe(1);
  });
});
