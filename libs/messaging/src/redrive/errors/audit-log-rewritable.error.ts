import { RedriveRefusedError } from './redrive-refused.error';

/**
 * The admin database login in use can rewrite the audit log despite its triggers (its owner, a member of
 * the owner role, a superuser, or UPDATE, DELETE, TRUNCATE or TRIGGER on the ledger's tables): the log would
 * prove nothing about what this login did. Use a login with SELECT and INSERT only (docs/guide/08-redrive.md,
 * "Permissions, the admin database"), or accept it explicitly (`--allow-rewritable-audit`, recorded).
 */
export class AuditLogRewritableError extends RedriveRefusedError {
  /** The guard that refused: always `AUDIT_REWRITABLE`. */
  readonly guard = 'AUDIT_REWRITABLE' as const;

  constructor(
    /** What lets the login rewrite the log, e.g. `owner of messaging_redrive_audit` or `superuser`. */
    readonly rights: readonly string[],
  ) {
    super(
      `This admin database login can rewrite the audit log (${rights.join(', ')}). Use a login ` +
        'with SELECT and INSERT only (docs/guide/08-redrive.md, "Permissions, the admin database"), or accept ' +
        'it with --allow-rewritable-audit (MESSAGING_ADMIN_ALLOW_REWRITABLE_AUDIT=true; the console: ' +
        'allowRewritableAudit), which every audit entry then records; --local-plaintext (brokers on this ' +
        'machine only) accepts it the same way.',
    );
    this.name = 'AuditLogRewritableError';
  }
}
