import { MigrationInterface, QueryRunner } from 'typeorm';

/** The `posts` table on MySQL or MariaDB, in the connection's database; times in UTC. */
export class CreateMysqlPosts1764806400000 implements MigrationInterface {
  name = 'CreateMysqlPosts1764806400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      create table posts (
        id integer not null auto_increment primary key,
        author_id integer not null,
        title varchar(200) not null,
        content text not null,
        created_at datetime(6) not null default (utc_timestamp(6)),
        key posts_author_id_idx (author_id)
      ) engine = InnoDB default character set utf8mb4 collate utf8mb4_bin`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('drop table posts');
  }
}
