import { httpRequest } from './http-request';

/** A post as post-service returns it. */
export interface PostView {
  id: number;
  authorId: number;
  title: string;
  content: string;
  createdAt: string;
  /** When its followers are told; `null`: when it was written. */
  publishAt: string | null;
  /** Its `PostCreated` event's id. */
  eventId: string | null;
}

/** A subscription as subscribe-service returns it. */
export interface SubscriptionView {
  id: number;
  subscriberId: number;
  authorId: number;
}

/** A notification as subscribe-service returns it. */
export interface NotificationView {
  id: number;
  subscriberId: number;
  postId: number;
  authorId: number;
  title: string;
  eventId: string;
  occurredAt: string;
  notifiedAt: string;
}

/** An HTTP answer: status 0 when no answer came (connection refused, timeout). */
export interface HttpResult<T> {
  status: number;
  body: T | undefined;
  error?: string;
}

/** Talks to the two services over HTTP, as a user with curl would. */
export class BlogClient {
  constructor(
    readonly postServiceUrl: string,
    readonly subscribeServiceUrl: string,
    private readonly timeoutMs = 10_000,
  ) {}

  createPost(body: unknown): Promise<HttpResult<PostView>> {
    return this.request('POST', `${this.postServiceUrl}/posts`, body);
  }

  /** Sends a raw body (malformed JSON, oversized payloads). */
  createPostRaw(body: string): Promise<HttpResult<unknown>> {
    return this.request('POST', `${this.postServiceUrl}/posts`, body, true);
  }

  getPost(id: number): Promise<HttpResult<PostView>> {
    return this.request('GET', `${this.postServiceUrl}/posts/${id}`);
  }

  /** 200 with the post as edited; 404 when there is none; 409 for a new `publishAt` once it was announced. */
  updatePost(id: number, body: unknown): Promise<HttpResult<PostView>> {
    return this.request('PATCH', `${this.postServiceUrl}/posts/${id}`, body);
  }

  /** 204, or 404 when there is no such post. */
  deletePost(id: number): Promise<HttpResult<unknown>> {
    return this.request('DELETE', `${this.postServiceUrl}/posts/${id}`);
  }

  subscribe(subscriberId: number, authorId: number): Promise<HttpResult<SubscriptionView>> {
    return this.request('POST', `${this.subscribeServiceUrl}/subscriptions`, { subscriberId, authorId });
  }

  unsubscribe(subscriptionId: number): Promise<HttpResult<unknown>> {
    return this.request('DELETE', `${this.subscribeServiceUrl}/subscriptions/${subscriptionId}`);
  }

  async notifications(subscriberId: number): Promise<NotificationView[]> {
    const result = await this.request<NotificationView[]>(
      'GET',
      `${this.subscribeServiceUrl}/subscribers/${subscriberId}/notifications`,
    );
    if (result.status !== 200 || !result.body) {
      throw new Error(`GET notifications of ${subscriberId} answered ${result.status} ${result.error ?? ''}`);
    }
    return result.body;
  }

  /** The Prometheus text of a service (`GET /metrics`). */
  async metrics(serviceUrl: string): Promise<string> {
    const answer = await httpRequest('GET', `${serviceUrl}/metrics`, undefined, this.timeoutMs);
    if (answer.status !== 200) throw new Error(`GET ${serviceUrl}/metrics answered ${answer.status}`);
    return answer.text;
  }

  private async request<T>(method: string, url: string, body?: unknown, raw = false): Promise<HttpResult<T>> {
    try {
      const text = body === undefined ? undefined : raw ? (body as string) : JSON.stringify(body);
      const answer = await httpRequest(method, url, text, this.timeoutMs);
      const json =
        answer.contentType?.includes('json') && answer.text ? (JSON.parse(answer.text) as T) : undefined;
      return { status: answer.status, body: json };
    } catch (error) {
      return { status: 0, body: undefined, error: error instanceof Error ? error.message : String(error) };
    }
  }
}
