import { MessagingError } from './messaging.error';

/** `defineEvent()` was given a field it cannot use. Raised when the definition is evaluated. */
export class InvalidEventDefinitionError extends MessagingError {
  constructor(
    /** The event's type, as given. */
    readonly eventType: string,
    /** The field that is wrong. */
    readonly field: 'type' | 'destination' | 'key' | 'version' | 'upcasters',
    /** What the field must be. */
    readonly expected: string,
  ) {
    super(`Event definition '${eventType}': '${field}' must be ${expected}.`);
    this.name = 'InvalidEventDefinitionError';
  }
}
