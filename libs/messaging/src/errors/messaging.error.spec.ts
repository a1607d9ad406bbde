import * as consoleEntry from '../console';
import * as microservicesEntry from '../microservices';
import * as redriveEntry from '../redrive';
import * as root from '../index';
import { MessagingConfigurationError } from './messaging-configuration.error';
import { MessagingError } from './messaging.error';

/** Every exported class of an entry point that is an Error. */
function errorClasses(entry: Record<string, unknown>): Array<[string, new (...args: never[]) => Error]> {
  return Object.entries(entry).filter(
    (pair): pair is [string, new (...args: never[]) => Error] =>
      typeof pair[1] === 'function' && (pair[1] as { prototype?: unknown }).prototype instanceof Error,
  );
}

describe(MessagingError.name, () => {
  const entries = { root, redrive: redriveEntry, console: consoleEntry, microservices: microservicesEntry };

  it.each(Object.entries(entries))('is the base of every error class the %s entry exports', (_, entry) => {
    const classes = errorClasses(entry);
    const outside = classes.filter(
      ([name, type]) => name !== 'MessagingError' && !(type.prototype instanceof MessagingError),
    );
    expect(outside.map(([name]) => name)).toEqual([]);
  });

  it('is exported from the root, and the redrive entry exports the same class', () => {
    expect(root.MessagingError).toBe(MessagingError);
    expect(redriveEntry.MessagingError).toBe(MessagingError);
    expect(errorClasses(root).length).toBeGreaterThan(10);
    expect(errorClasses(redriveEntry).length).toBeGreaterThan(10);
  });

  it("keeps each error's own name, message and fields", () => {
    const error = new MessagingConfigurationError('@RetryPolicy on A.b', 'maxAttempts must be at least 1.');
    expect(error).toBeInstanceOf(MessagingError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('MessagingConfigurationError');
    expect(error.message).toBe('@RetryPolicy on A.b: maxAttempts must be at least 1.');
    expect(error.where).toBe('@RetryPolicy on A.b');
  });
});
