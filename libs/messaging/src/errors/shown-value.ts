/** A short rendering of an offending value for an error message (never more than its JSON). */
export function showValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return String(value);
    case 'object':
      if (value instanceof Date)
        return Number.isNaN(value.getTime()) ? 'an invalid Date' : value.toISOString();
      try {
        return JSON.stringify(value) ?? 'null';
      } catch {
        return 'an object that cannot be serialised';
      }
    default:
      return `a ${typeof value}`;
  }
}
