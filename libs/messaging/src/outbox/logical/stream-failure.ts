import { LogicalDecodingUnavailableError } from '../../errors/logical-decoding-unavailable.error';
import { ReplicationSlotInvalidatedError } from '../../errors/replication-slot-invalidated.error';
import { ReplicationSlotMissingError } from '../../errors/replication-slot-missing.error';

/**
 * Why the relay is not reading the slot, and what it does about it:
 * - `standby`: another instance reads it (PostgreSQL allows one reader per slot); try again in a second, so
 *   that this instance takes over within seconds when that one dies;
 * - `slot` / `server`: an operator must act (create or recover the slot, grant REPLICATION, …); try again every
 *   few seconds, so that the relay resumes by itself once they did, and say so in health and in the log;
 * - `connection`: PostgreSQL is down, restarting, or the connection dropped: reconnect with a backoff.
 */
export type StreamFailure =
  | { readonly kind: 'standby' }
  | { readonly kind: 'slot'; readonly problem: 'missing' | 'invalidated' }
  | { readonly kind: 'server' }
  | { readonly kind: 'connection' };

/** SQLSTATEs of the replication connection's refusals. */
const SQLSTATE = {
  /** object_in_use: "replication slot … is active for PID …". */
  SLOT_IN_USE: '55006',
  /** undefined_object: the slot does not exist. */
  UNDEFINED_OBJECT: '42704',
  /** insufficient_privilege: the role lacks REPLICATION. */
  INSUFFICIENT_PRIVILEGE: '42501',
  /** invalid_authorization_specification: no pg_hba.conf entry for a replication connection, or the role. */
  INVALID_AUTHORIZATION: '28000',
  /**
   * invalid_parameter_value: the server refuses START_REPLICATION's options (pgoutput before 14 knows no
   * `messages`): nothing a reconnect fixes.
   */
  INVALID_PARAMETER_VALUE: '22023',
  /** object_not_in_prerequisite_state: wal_level too low, or the slot was invalidated. */
  NOT_IN_PREREQUISITE_STATE: '55000',
} as const;

/**
 * Classifies a failure to start or keep the stream, by type and SQLSTATE (never by message text). A 55000 is
 * an invalidated slot when `slotLost()` says so, else the server's settings.
 */
export async function classifyStreamFailure(
  error: unknown,
  slotLost: () => Promise<boolean>,
): Promise<StreamFailure> {
  if (error instanceof ReplicationSlotMissingError) return { kind: 'slot', problem: 'missing' };
  if (error instanceof ReplicationSlotInvalidatedError) return { kind: 'slot', problem: 'invalidated' };
  if (error instanceof LogicalDecodingUnavailableError) return { kind: 'server' };
  switch ((error as { code?: unknown } | undefined)?.code) {
    case SQLSTATE.SLOT_IN_USE:
      return { kind: 'standby' };
    case SQLSTATE.UNDEFINED_OBJECT:
      return { kind: 'slot', problem: 'missing' };
    case SQLSTATE.INSUFFICIENT_PRIVILEGE:
    case SQLSTATE.INVALID_AUTHORIZATION:
    case SQLSTATE.INVALID_PARAMETER_VALUE:
      return { kind: 'server' };
    case SQLSTATE.NOT_IN_PREREQUISITE_STATE:
      return (await slotLost().catch(() => false))
        ? { kind: 'slot', problem: 'invalidated' }
        : { kind: 'server' };
    default:
      return { kind: 'connection' };
  }
}
