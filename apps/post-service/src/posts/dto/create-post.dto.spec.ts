import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { CreatePostDto } from './create-post.dto';

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
});
