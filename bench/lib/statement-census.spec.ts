import { statementKind } from './statement-census';

describe('statementKind', () => {
  it.each([
    ['START TRANSACTION', 'begin'],
    ['COMMIT', 'commit'],
    [
      'with sent as (\n  update "s".messaging_outbox set sent_at = now() ...',
      'relay: claim (marks the batch before)',
    ],
    [
      'update "s".messaging_outbox set sent_at = now(), locked_by = null where id = any($1::bigint[])',
      'relay: mark sent',
    ],
    ['delete from "s".messaging_outbox where id = any($1::bigint[]) and locked_by = $2', 'relay: mark sent'],
    [
      'update "s".messaging_outbox set locked_by = null, locked_until = null where id = any($1)',
      'relay: release',
    ],
    [
      'INSERT INTO "s"."bench_orders"("key", "seq") VALUES ($1, $2) RETURNING "id"',
      'writer: business insert',
    ],
    ['insert into "s".messaging_outbox (message_id, destination) values ($1, $2)', 'writer: outbox insert'],
    [
      'with input as (\n select * from unnest($1)), recorded as (\n insert into "s".messaging_inbox ...',
      'consumer: inbox record',
    ],
    [
      'delete from "s".messaging_inbox where (consumer_group, message_id) in (...)',
      'consumer: inbox retention',
    ],
    ['select pg_try_advisory_xact_lock(hashtext($1)) as locked', 'writer: outbox retention'],
    [
      'delete from "s".messaging_outbox where id in (select id from "s".messaging_outbox)',
      'writer: outbox retention',
    ],
    ['select 1', 'other: select 1'],
  ])('tells %j as %s', (sql, kind) => {
    expect(statementKind(sql)).toBe(kind);
  });
});
