import { MigrationInterface, QueryRunner } from 'typeorm';
import { qualifiedTable } from '@app/service-kit';

/** A post's `publish_at` (when its followers are told) and `event_id` (its `PostCreated`, to cancel it). */
export class AddPostPublishAt1765324800000 implements MigrationInterface {
  name = 'AddPostPublishAt1765324800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `alter table ${qualifiedTable(queryRunner, 'posts')} add column publish_at timestamptz, add column event_id uuid`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `alter table ${qualifiedTable(queryRunner, 'posts')} drop column event_id, drop column publish_at`,
    );
  }
}
