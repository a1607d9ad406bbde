import { ConsoleRole, ConsoleUser } from './console-options.interface';

/** What a console request does, each allowed to some roles only. */
export type ConsoleAction = 'view' | 'plan' | 'approve' | 'execute' | 'read-payload';

const ALLOWED: Record<Exclude<ConsoleAction, 'read-payload'>, readonly ConsoleRole[]> = {
  view: ['viewer', 'operator', 'approver'],
  plan: ['operator'],
  approve: ['approver'],
  execute: ['operator'],
};

/** True when `user` may do `action`; payloads go to `payloadRoles` only. */
export function mayDo(
  user: ConsoleUser,
  action: ConsoleAction,
  payloadRoles: readonly ConsoleRole[],
): boolean {
  const allowed = action === 'read-payload' ? payloadRoles : ALLOWED[action];
  return user.roles.some((role) => allowed.includes(role));
}
