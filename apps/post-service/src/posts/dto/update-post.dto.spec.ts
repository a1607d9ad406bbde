import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { UpdatePostDto } from './update-post.dto';

describe(UpdatePostDto.name, () => {
  async function problems(body: object): Promise<Record<string, string[]>> {
    const errors = await validate(plainToInstance(UpdatePostDto, body), {
      whitelist: true,
      forbidNonWhitelisted: true,
      stopAtFirstError: true,
    });
    return Object.fromEntries(errors.map((e) => [e.property, Object.values(e.constraints ?? {})]));
  }

  it('accepts any of the fields, or none', async () => {
    expect(await problems({})).toEqual({});
    const soon = new Date(Date.now() + 60_000).toISOString();
    expect(await problems({ title: 'New', publishAt: soon })).toEqual({});
  });

  it('refuses what POST /posts refuses, and a new author', async () => {
    expect(await problems({ title: '', content: 7, publishAt: 'soon', authorId: 8 })).toEqual({
      title: ['title should not be empty'],
      content: ['content must be a string'],
      publishAt: ['publishAt must be a valid ISO 8601 date string'],
      authorId: ['property authorId should not exist'],
    });
  });
});
