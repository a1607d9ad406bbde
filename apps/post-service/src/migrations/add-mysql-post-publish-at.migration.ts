import { MigrationInterface, QueryRunner } from 'typeorm';

/** `AddPostPublishAt1765324800000` on MySQL or MariaDB; times in UTC. */
export class AddMysqlPostPublishAt1765324800000 implements MigrationInterface {
  name = 'AddMysqlPostPublishAt1765324800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'alter table posts add column publish_at datetime(6) null, add column event_id char(36) character set ascii null',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('alter table posts drop column event_id, drop column publish_at');
  }
}
