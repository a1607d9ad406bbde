import 'reflect-metadata';
import { FailureCategory } from '../errors/failure-category';
import { IDEMPOTENT_HANDLER_METADATA, OUTBOX_METADATA, RETRY_POLICY_METADATA } from '../messaging.constants';
import { RetryPolicy } from './retry-policy.decorator';
import { RetryMode, RetryOrdering, RetryPolicyOptions } from './retry-policy.interface';

const POLICY: RetryPolicyOptions = {
  maxAttempts: 5,
  mode: RetryMode.PAUSE_PARTITION,
  ordering: RetryOrdering.PRESERVE,
  backoff: { initialDelayMs: 500 },
  nonRetryableCategories: [FailureCategory.VALIDATION],
};

describe(RetryPolicy.name, () => {
  describe('decoration', () => {
    it('records the options under RETRY_POLICY_METADATA on the method', () => {
      class Handlers {
        @RetryPolicy(POLICY)
        onPostCreated(): string {
          return 'handled';
        }
      }
      expect(Reflect.getMetadata(RETRY_POLICY_METADATA, Handlers.prototype.onPostCreated)).toEqual(POLICY);
    });

    it('records the options as given, without resolving or validating them', () => {
      const invalid = { maxAttempts: 0, mode: 'SOON' } as unknown as RetryPolicyOptions;
      class Handlers {
        @RetryPolicy(invalid)
        onPostCreated(): void {}
      }
      expect(Reflect.getMetadata(RETRY_POLICY_METADATA, Handlers.prototype.onPostCreated)).toBe(invalid);
    });

    it('attaches nothing else and leaves the method as it was', () => {
      const method = jest.fn(() => 'handled');
      const target = {};
      const descriptor: PropertyDescriptor = {
        value: method,
        writable: true,
        enumerable: false,
        configurable: true,
      };

      const result = RetryPolicy(POLICY)(target, 'onPostCreated', descriptor);

      expect(result === undefined || result === descriptor).toBe(true);
      expect(descriptor.value).toBe(method);
      expect(method).not.toHaveBeenCalled();
      expect(Reflect.getOwnMetadataKeys(method)).toEqual([RETRY_POLICY_METADATA]);
      expect(Reflect.getOwnMetadataKeys(target)).toEqual([]);
      expect(Reflect.getOwnMetadataKeys(target, 'onPostCreated')).toEqual([]);
      expect(Reflect.getMetadata(OUTBOX_METADATA, method)).toBeUndefined();
      expect(Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, method)).toBeUndefined();
    });

    it('does nothing until it is applied', () => {
      const method = jest.fn();
      RetryPolicy(POLICY);
      expect(Reflect.getOwnMetadataKeys(method)).toEqual([]);
    });

    it('keeps the methods of one class apart', () => {
      class Handlers {
        @RetryPolicy({ maxAttempts: 2, mode: RetryMode.INLINE })
        first(): void {}

        @RetryPolicy({ maxAttempts: 3, mode: RetryMode.RETRY_DESTINATION })
        second(): void {}

        undecorated(): void {}
      }
      expect(Reflect.getMetadata(RETRY_POLICY_METADATA, Handlers.prototype.first)).toEqual({
        maxAttempts: 2,
        mode: RetryMode.INLINE,
      });
      expect(Reflect.getMetadata(RETRY_POLICY_METADATA, Handlers.prototype.second)).toEqual({
        maxAttempts: 3,
        mode: RetryMode.RETRY_DESTINATION,
      });
      expect(Reflect.getMetadata(RETRY_POLICY_METADATA, Handlers.prototype.undecorated)).toBeUndefined();
    });

    it('leaves the decorated method callable as before', () => {
      class Handlers {
        constructor(private readonly prefix: string) {}

        @RetryPolicy(POLICY)
        handle(value: number): string {
          return `${this.prefix}${value}`;
        }
      }
      expect(new Handlers('n=').handle(3)).toBe('n=3');
    });
  });
});
