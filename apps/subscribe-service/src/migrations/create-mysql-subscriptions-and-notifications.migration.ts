import { MigrationInterface, QueryRunner } from 'typeorm';

/** The `subscriptions` and `notifications` tables on MySQL or MariaDB, in the connection's database; times in UTC. */
export class CreateMysqlSubscriptionsAndNotifications1764806400000 implements MigrationInterface {
  name = 'CreateMysqlSubscriptionsAndNotifications1764806400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      create table subscriptions (
        id integer not null auto_increment primary key,
        subscriber_id integer not null,
        author_id integer not null,
        created_at datetime(6) not null default (utc_timestamp(6)),
        unique key subscriptions_subscriber_author_key (subscriber_id, author_id),
        key subscriptions_author_id_idx (author_id)
      ) engine = InnoDB default character set utf8mb4 collate utf8mb4_bin`);
    await queryRunner.query(`
      create table notifications (
        id integer not null auto_increment primary key,
        subscriber_id integer not null,
        post_id integer not null,
        author_id integer not null,
        title varchar(200) not null,
        event_id char(36) character set ascii not null,
        occurred_at datetime(6) not null,
        notified_at datetime(6) not null,
        unique key notifications_subscriber_post_key (subscriber_id, post_id),
        key notifications_subscriber_id_idx (subscriber_id)
      ) engine = InnoDB default character set utf8mb4 collate utf8mb4_bin`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('drop table notifications');
    await queryRunner.query('drop table subscriptions');
  }
}
