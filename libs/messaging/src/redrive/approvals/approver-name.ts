import { hasUnprintable } from '../../common/printable';

/** An approver's name: letters, digits and `.`, `_`, `@`, `-`, starting with a letter or digit. */
const APPROVER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/;

/** True when `name` may name an approver (no control characters, no look-alike tricks). */
export function isApproverName(name: string): boolean {
  return APPROVER_NAME.test(name);
}

/** True when `name` (a broker principal) has no control characters and is 1-256 characters long. */
export function isPrintableName(name: string): boolean {
  return name.length > 0 && name.length <= 256 && !hasUnprintable(name);
}

/** Names compared for the four-eyes rule: `Jane.Doe` and `jane.doe` are one person. */
export function samePerson(a: string, b: string): boolean {
  return a.normalize('NFKC').toLowerCase() === b.normalize('NFKC').toLowerCase();
}
