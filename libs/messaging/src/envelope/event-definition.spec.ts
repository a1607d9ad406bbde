import { z } from 'zod';
import { InvalidEventDefinitionError } from '../errors/invalid-event-definition.error';
import { defineEvent, EventDefinitionInput, EventPayload } from './event-definition';

const schema = z.object({ postId: z.number().int(), authorId: z.number().int(), title: z.string() });

function input(
  overrides: Partial<EventDefinitionInput<string, typeof schema>> = {},
): EventDefinitionInput<string, typeof schema> {
  return {
    type: 'PostCreated',
    destination: 'post-create',
    schema,
    key: (event) => event.authorId,
    ...overrides,
  };
}

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('event-definition', () => {
  describe(defineEvent.name, () => {
    it.each([
      '.',
      '..',
      '__consumer_offsets',
      'amq.topic',
      '_schemas',
      'orders.billing.dlq',
      'orders.x.retry.1000ms',
    ])('refuses the broker-reserved destination %s', (destination) => {
      expect(() => defineEvent({ type: 'T', destination, schema: z.object({}), key: () => 'k' })).toThrow(
        InvalidEventDefinitionError,
      );
    });

    it('returns the type, destination and schema it was given', () => {
      const PostCreated = defineEvent(input());
      expect(PostCreated.type).toBe('PostCreated');
      expect(PostCreated.destination).toBe('post-create');
      expect(PostCreated.schema).toBe(schema);
    });

    it('keeps the literal type name in the type of the definition', () => {
      const PostCreated = defineEvent({
        type: 'PostCreated',
        destination: 'post-create',
        schema,
        key: (event) => event.postId,
      });
      const type: 'PostCreated' = PostCreated.type;
      const payload: EventPayload<typeof PostCreated> = { postId: 1, authorId: 2, title: 't' };
      expect([type, PostCreated.key(payload)]).toEqual(['PostCreated', '1']);
    });

    it('stringifies a numeric key', () => {
      const PostCreated = defineEvent(input());
      expect(PostCreated.key({ postId: 1, authorId: 42, title: 'Hello' })).toBe('42');
      expect(PostCreated.key({ postId: 1, authorId: 0, title: 'Hello' })).toBe('0');
    });

    it('returns a string key unchanged', () => {
      const PostCreated = defineEvent(input({ key: (event) => `author-${event.authorId}` }));
      expect(PostCreated.key({ postId: 1, authorId: 7, title: 'Hello' })).toBe('author-7');
    });

    it('calls the key function with the payload each time', () => {
      const key = jest.fn((event: z.output<typeof schema>) => event.postId);
      const PostCreated = defineEvent(input({ key }));
      expect(key).not.toHaveBeenCalled();
      const payload = { postId: 5, authorId: 6, title: 'x' };
      PostCreated.key(payload);
      expect(key).toHaveBeenCalledTimes(1);
      expect(key).toHaveBeenCalledWith(payload);
    });

    it('returns a frozen definition', () => {
      const PostCreated = defineEvent(input());
      expect(Object.isFrozen(PostCreated)).toBe(true);
      expect(() => {
        (PostCreated as { destination: string }).destination = 'elsewhere';
      }).toThrow(TypeError);
      expect(PostCreated.destination).toBe('post-create');
    });

    it('validates payloads with the schema', () => {
      const PostCreated = defineEvent(input());
      expect(PostCreated.schema.safeParse({ postId: 1, authorId: 2, title: 'Hi' })).toEqual({
        success: true,
        data: { postId: 1, authorId: 2, title: 'Hi' },
      });
      const bad = PostCreated.schema.safeParse({ postId: 1.5, authorId: 2 });
      expect(bad.success).toBe(false);
      expect(bad.error?.issues.map((issue) => issue.path.join('.')).sort()).toEqual(['postId', 'title']);
    });

    it.each([
      'PostCreated',
      'post.created.v2',
      'Post_Created-1',
      'P',
      `P${'x'.repeat(199)}`, // 200 characters
    ])('accepts the type %p', (type) => {
      expect(defineEvent(input({ type })).type).toBe(type);
    });

    it.each(['post-create', 'blog.posts_v2', '1-topic', 'x', 'd'.repeat(200)])(
      'accepts the destination %p',
      (destination) => {
        expect(defineEvent(input({ destination })).destination).toBe(destination);
      },
    );

    it.each([
      ['empty', ''],
      ['starting with a digit', '1Post'],
      ['starting with a dot', '.Post'],
      ['with a space', 'Post Created'],
      ['with a colon', 'post:created'],
      ['with a slash', 'post/created'],
      ['with a non-ASCII letter', 'PostÉcrit'],
      ['longer than 200 characters', `P${'x'.repeat(200)}`],
    ])('throws InvalidEventDefinitionError naming type for a type %s', (_, type) => {
      const error = thrownBy(() => defineEvent(input({ type })));
      expect(error).toBeInstanceOf(InvalidEventDefinitionError);
      expect(error).toMatchObject({ name: 'InvalidEventDefinitionError', field: 'type', eventType: type });
      expect((error as Error).message).toContain(`'type' must be`);
    });

    it.each([
      ['empty', ''],
      ['with a space', 'post create'],
      ['with a slash', 'post/create'],
      ['with a hash', 'post#create'],
      ['with a star', 'post.*'],
      ['longer than 200 characters', 'd'.repeat(201)],
    ])('throws InvalidEventDefinitionError naming destination for a destination %s', (_, destination) => {
      const error = thrownBy(() => defineEvent(input({ destination })));
      expect(error).toBeInstanceOf(InvalidEventDefinitionError);
      expect(error).toMatchObject({ field: 'destination', eventType: 'PostCreated' });
      expect((error as Error).message).toBe(
        `Event definition 'PostCreated': 'destination' must be letters, digits, ".", "_" or "-" (1-200).`,
      );
    });

    it('throws InvalidEventDefinitionError naming key when key is not a function', () => {
      const notAFunction = 'authorId' as unknown as EventDefinitionInput<string, typeof schema>['key'];
      const error = thrownBy(() => defineEvent(input({ key: notAFunction })));
      expect(error).toBeInstanceOf(InvalidEventDefinitionError);
      expect(error).toMatchObject({ field: 'key', eventType: 'PostCreated' });
    });

    it('checks the type before the destination', () => {
      const error = thrownBy(() => defineEvent(input({ type: '', destination: '' })));
      expect(error).toMatchObject({ field: 'type' });
    });

    describe('version and upcasters', () => {
      const up = (v: { title: string }) => ({ ...v, title: v.title.trim() });

      it('is version 1 without upcasters by default', () => {
        const event = defineEvent(input());
        expect(event.version).toBe(1);
        expect(event.upcasters).toEqual({});
      });

      it('keeps a version and an unbroken chain of upcasters ending at version - 1, frozen', () => {
        const event = defineEvent(input({ version: 4, upcasters: { 2: up, 3: up } }));
        expect(event.version).toBe(4);
        expect(Object.keys(event.upcasters ?? {})).toEqual(['2', '3']);
        expect(Object.isFrozen(event.upcasters)).toBe(true);
      });

      it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 1_000_001, '2' as unknown as number])(
        'refuses the version %p, naming it',
        (version) => {
          const error = thrownBy(() => defineEvent(input({ version })));
          expect(error).toBeInstanceOf(InvalidEventDefinitionError);
          expect(error).toMatchObject({ field: 'version', eventType: 'PostCreated' });
          expect((error as Error).message).toMatch(
            /'version' must be a whole number from 1 to 1000000 \(got /,
          );
        },
      );

      it('refuses a gap in the chain, naming the missing step', () => {
        const error = thrownBy(() => defineEvent(input({ version: 4, upcasters: { 1: up, 3: up } })));
        expect(error).toMatchObject({ field: 'upcasters' });
        expect((error as Error).message).toBe(
          "Event definition 'PostCreated': 'upcasters' must be an unbroken chain from version 1 to 4: " +
            'there is no upcaster from version 2 to 3.',
        );
      });

      it('refuses a chain that stops short of version - 1', () => {
        const error = thrownBy(() => defineEvent(input({ version: 3, upcasters: { 1: up } })));
        expect((error as Error).message).toContain('there is no upcaster from version 2 to 3');
      });

      it.each([
        ['from the version itself', { 3: up }],
        ['from a newer version', { 5: up }],
        ['from version 0', { 0: up }],
        ['from a fraction', { '1.5': up }],
        ['from a name', { v1: up }],
      ])('refuses an upcaster %s', (_, upcasters) => {
        const bad = upcasters as unknown as EventDefinitionInput<string, typeof schema>['upcasters'];
        const error = thrownBy(() => defineEvent(input({ version: 3, upcasters: bad })));
        expect(error).toMatchObject({ field: 'upcasters' });
        expect((error as Error).message).toMatch(/keyed by the versions below 3/);
      });

      it('refuses an upcaster that is not a function, and upcasters that are not an object', () => {
        const notAFunction = { 1: 'trim' } as unknown as EventDefinitionInput<
          string,
          typeof schema
        >['upcasters'];
        expect(
          (thrownBy(() => defineEvent(input({ version: 2, upcasters: notAFunction }))) as Error).message,
        ).toContain('the one from version 1 is not');
        const list = [up] as unknown as EventDefinitionInput<string, typeof schema>['upcasters'];
        expect(thrownBy(() => defineEvent(input({ version: 2, upcasters: list })))).toMatchObject({
          field: 'upcasters',
        });
      });

      it('accepts a version without upcasters (it takes only its own version)', () => {
        expect(defineEvent(input({ version: 2 })).upcasters).toEqual({});
      });
    });
  });
});
