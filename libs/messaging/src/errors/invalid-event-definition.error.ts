/** `defineEvent()` was given a field it cannot use. Raised when the definition is evaluated. */
export class InvalidEventDefinitionError extends Error {
  constructor(
    readonly eventType: string,
    readonly field: 'type' | 'destination' | 'key',
    readonly expected: string,
  ) {
    super(`Event definition '${eventType}': '${field}' must be ${expected}.`);
    this.name = 'InvalidEventDefinitionError';
  }
}
