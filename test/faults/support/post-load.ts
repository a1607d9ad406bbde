import { BlogClient } from '../../../tools/demo/blog-client';
import { sleep } from '../../../tools/demo/blog-scenario';

/** One `POST /posts` of the load, as the client saw it. */
export interface PostRequest {
  /** Unique in the run, and the post's title: how a post row is traced back to its request. */
  readonly title: string;
  readonly authorId: number;
  /** Position in the author's sequence: 0, 1, 2, ... */
  readonly index: number;
  /** Which post-service instance it went to. */
  readonly target: string;
  readonly sentAt: number;
  answeredAt?: number;
  /** HTTP status; 0 when no answer came (connection refused or cut, timeout). */
  status?: number;
  postId?: number;
  error?: string;
}

/** A post-service instance the load may send to, while `available()` says it is up. */
export interface LoadTarget {
  readonly name: string;
  readonly client: BlogClient;
  available(): boolean;
}

/** Options of `PostLoad`. */
export interface PostLoadOptions {
  readonly authorIds: readonly number[];
  readonly postsPerSecond: number;
  readonly targets: readonly LoadTarget[];
  /** Prefix of every title (unique per run). */
  readonly tag: string;
}

/**
 * A steady, bounded load of posts: each author writes one post at a time (the next one only after the
 * previous one was answered, so an author's posts have a well-defined order), at `postsPerSecond` over all
 * authors, spread evenly. Requests go round-robin to the post-service instances that are up (as a load
 * balancer's health check would route them). Every request's outcome is recorded.
 */
export class PostLoad {
  readonly requests: PostRequest[] = [];
  private stopped = false;
  private running?: Promise<void>;
  private turn = 0;
  startedAt = 0;

  constructor(private readonly options: PostLoadOptions) {}

  start(): void {
    this.startedAt = Date.now();
    const { authorIds, postsPerSecond } = this.options;
    const gapMs = 1_000 / postsPerSecond;
    const periodMs = gapMs * authorIds.length;
    this.running = Promise.all(
      authorIds.map((authorId, k) => this.author(authorId, this.startedAt + k * gapMs, periodMs)),
    ).then(() => undefined);
  }

  /** Stops sending and waits for the requests in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  /** Requests answered 201, in the order they were answered. */
  created(): PostRequest[] {
    return this.requests.filter((r) => r.status === 201);
  }

  private async author(authorId: number, firstAt: number, periodMs: number): Promise<void> {
    for (let index = 0; !this.stopped; index++) {
      await sleep(Math.max(0, firstAt + index * periodMs - Date.now()));
      if (this.stopped) return;
      const target = await this.nextTarget();
      if (!target) return;
      const request: PostRequest = {
        title: `${this.options.tag} author ${authorId} post ${index}`,
        authorId,
        index,
        target: target.name,
        sentAt: Date.now(),
      };
      this.requests.push(request);
      const result = await target.client.createPost({
        authorId,
        title: request.title,
        content: `Post ${index} of author ${authorId}, written under faults.`,
      });
      request.answeredAt = Date.now();
      request.status = result.status;
      request.postId = result.status === 201 ? result.body?.id : undefined;
      request.error = result.error;
    }
  }

  /** The next instance that is up, round-robin; waits while none is. */
  private async nextTarget(): Promise<LoadTarget | undefined> {
    const { targets } = this.options;
    while (!this.stopped) {
      for (let i = 0; i < targets.length; i++) {
        const target = targets[(this.turn + i) % targets.length];
        if (target.available()) {
          this.turn = (this.turn + i + 1) % targets.length;
          return target;
        }
      }
      await sleep(100);
    }
    return undefined;
  }
}
