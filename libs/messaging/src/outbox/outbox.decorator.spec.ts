import 'reflect-metadata';
import { IDEMPOTENT_HANDLER_METADATA, OUTBOX_METADATA, RETRY_POLICY_METADATA } from '../messaging.constants';
import { Outbox } from './outbox.decorator';

describe(Outbox.name, () => {
  describe('decoration', () => {
    it('records empty options under OUTBOX_METADATA when given none', () => {
      class PostsService {
        @Outbox()
        async create(): Promise<void> {}
      }
      expect(Reflect.getMetadata(OUTBOX_METADATA, PostsService.prototype.create)).toEqual({});
    });

    it('records the options it was given', () => {
      class PostsService {
        @Outbox({ isolation: 'SERIALIZABLE' })
        async create(): Promise<void> {}
      }
      expect(Reflect.getMetadata(OUTBOX_METADATA, PostsService.prototype.create)).toEqual({
        isolation: 'SERIALIZABLE',
      });
    });

    it('does not wrap the method: the transaction is added at startup, not at decoration', () => {
      const method = jest.fn(async () => 'created');
      const target = {};
      const descriptor: PropertyDescriptor = {
        value: method,
        writable: true,
        enumerable: false,
        configurable: true,
      };

      const result = Outbox()(target, 'create', descriptor);

      expect(result === undefined || result === descriptor).toBe(true);
      expect(descriptor.value).toBe(method);
      expect(method).not.toHaveBeenCalled();
      expect(Reflect.getOwnMetadataKeys(method)).toEqual([OUTBOX_METADATA]);
      expect(Reflect.getOwnMetadataKeys(target)).toEqual([]);
      expect(Reflect.getOwnMetadataKeys(target, 'create')).toEqual([]);
      expect(Reflect.getMetadata(RETRY_POLICY_METADATA, method)).toBeUndefined();
      expect(Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, method)).toBeUndefined();
    });

    it('leaves the decorated method callable as before, outside any transaction', async () => {
      class PostsService {
        @Outbox()
        async create(title: string): Promise<string> {
          return `created ${title}`;
        }
      }
      await expect(new PostsService().create('Hello')).resolves.toBe('created Hello');
    });

    it('marks only the decorated method', () => {
      class PostsService {
        @Outbox()
        async create(): Promise<void> {}

        async list(): Promise<void> {}
      }
      expect(Reflect.getMetadata(OUTBOX_METADATA, PostsService.prototype.list)).toBeUndefined();
    });
  });
});
