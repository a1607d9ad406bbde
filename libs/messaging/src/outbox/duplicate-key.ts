/**
 * True for a unique index's refusal, on PostgreSQL (`23505`) or MySQL and MariaDB (`ER_DUP_ENTRY`, 1062): in
 * the outbox, whose only unique index a writer can violate is the message id's.
 */
export function isUniqueViolation(error: unknown): boolean {
  const driverError = (error as { driverError?: { code?: unknown; errno?: unknown } } | null)?.driverError;
  return driverError?.code === '23505' || driverError?.errno === 1062;
}
