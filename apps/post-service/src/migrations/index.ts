import { ServiceMigrations } from '@app/service-kit';
import { AddMysqlPostPublishAt1765324800000 } from './add-mysql-post-publish-at.migration';
import { AddPostPublishAt1765324800000 } from './add-post-publish-at.migration';
import { CreateMysqlPosts1764806400000 } from './create-mysql-posts.migration';
import { CreatePosts1764633600000 } from './create-posts.migration';

/** post-service's own migrations, per database; the app runs them with the messaging library's at startup. */
export const PostServiceMigrations: ServiceMigrations = {
  postgres: [CreatePosts1764633600000, AddPostPublishAt1765324800000],
  mysql: [CreateMysqlPosts1764806400000, AddMysqlPostPublishAt1765324800000],
};
