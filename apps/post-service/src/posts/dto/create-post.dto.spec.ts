import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { CreatePostDto, MAX_PUBLISH_AHEAD_MS } from './create-post.dto';

describe(CreatePostDto.name, () => {
  async function problems(body: object): Promise<Record<string, string[]>> {
    const errors = await validate(plainToInstance(CreatePostDto, body), {
      whitelist: true,
      forbidNonWhitelisted: true,
      stopAtFirstError: true,
    });
    return Object.fromEntries(errors.map((e) => [e.property, Object.values(e.constraints ?? {})]));
  }

  it('accepts a post', async () => {
    expect(await problems({ authorId: 7, title: 'Hello', content: 'World' })).toEqual({});
  });

  it('reports the first rule each field breaks, the type first', async () => {
    expect(await problems({ authorId: '7', title: '', content: 'x'.repeat(10_001), admin: true })).toEqual({
      authorId: ['authorId must be an integer number'],
      title: ['title should not be empty'],
      content: ['content must be shorter than or equal to 10000 characters'],
      admin: ['property admin should not exist'],
    });
    expect(await problems({ authorId: 0, title: 'x'.repeat(201) })).toEqual({
      authorId: ['authorId must not be less than 1'],
      title: ['title must be shorter than or equal to 200 characters'],
      content: ['content must be a string'],
    });
  });

  describe('publishAt', () => {
    const post = { authorId: 7, title: 'Hello', content: 'World' };

    it('accepts an ISO 8601 time, ahead or past', async () => {
      const soon = new Date(Date.now() + 60_000).toISOString();
      expect(await problems({ ...post, publishAt: soon })).toEqual({});
      expect(await problems({ ...post, publishAt: '2020-01-01T00:00:00Z' })).toEqual({});
    });

    it('refuses what is not an ISO 8601 time, and a time more than a year ahead', async () => {
      expect(await problems({ ...post, publishAt: 'tomorrow' })).toEqual({
        publishAt: ['publishAt must be a valid ISO 8601 date string'],
      });
      expect(await problems({ ...post, publishAt: 1_800_000_000_000 })).toEqual({
        publishAt: ['publishAt must be a valid ISO 8601 date string'],
      });
      const tooFar = new Date(Date.now() + MAX_PUBLISH_AHEAD_MS + 60_000).toISOString();
      expect(await problems({ ...post, publishAt: tooFar })).toEqual({
        publishAt: ['publishAt must be at most a year ahead'],
      });
    });
  });
});
