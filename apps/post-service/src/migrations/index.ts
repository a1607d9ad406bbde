import { CreatePosts1764633600000 } from './create-posts.migration';

/** post-service's own migrations; the app runs them with the messaging library's at startup. */
export const PostServiceMigrations = [CreatePosts1764633600000];
