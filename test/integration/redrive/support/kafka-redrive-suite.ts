import { Admin, Kafka } from 'kafkajs';
import { RedriveService } from 'nest-reliable-messaging/redrive';
import { KafkaTopics, testKafka } from '../../../harness/kafka';
import { infraEnv } from '../../../harness/infra';
import { RawKafkaProducer } from '../../support/kafka-wire';
import { RedriveFixture } from './redrive-fixture';

/** A Kafka redrive suite's resources; `fixture` and `redrive` exist once its `beforeAll` ran. */
export interface KafkaRedriveSuite {
  readonly kafka: Kafka;
  readonly topics: KafkaTopics;
  readonly raw: RawKafkaProducer;
  readonly admin: Admin;
  /** Consumer groups a test made: deleted after the suite. */
  readonly groups: string[];
  /** The admin database and `RedriveService` (as `redrive-admin`, local plaintext). */
  ready(): { fixture: RedriveFixture; redrive: RedriveService };
}

/**
 * Registers the suite's `beforeAll`/`afterAll`: a `RedriveFixture` named after `name` and a `RedriveService`
 * on the shared broker, an admin client and a raw producer; afterwards all of it closed, its groups and
 * topics deleted.
 */
export function useKafkaRedriveSuite(name: string): KafkaRedriveSuite {
  const kafka = testKafka();
  const admin = kafka.admin();
  const suite = {
    kafka,
    topics: new KafkaTopics(kafka),
    raw: new RawKafkaProducer(kafka),
    admin,
    groups: [] as string[],
  };
  let made: { fixture: RedriveFixture; redrive: RedriveService } | undefined;
  beforeAll(async () => {
    const fixture = await RedriveFixture.create(name);
    const redrive = fixture.service(
      { kind: 'kafka', brokers: infraEnv().kafkaBrokers, allowPlaintextLocal: true },
      { principal: 'redrive-admin', secret: 'test-secret' },
    );
    made = { fixture, redrive };
    await admin.connect();
  });
  afterAll(async () => {
    await made?.fixture.close();
    await suite.raw.stop();
    await admin.deleteGroups(suite.groups).catch(() => undefined);
    await admin.disconnect();
    await suite.topics.cleanup();
  });
  return {
    ...suite,
    ready: () => {
      if (!made) throw new Error('the Kafka redrive suite is not set up yet (use it inside tests and hooks)');
      return made;
    },
  };
}
