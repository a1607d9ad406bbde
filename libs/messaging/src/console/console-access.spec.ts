import { ConsoleAction, mayDo } from './console-access';
import { ConsoleRole } from './console-options.interface';

describe(mayDo.name, () => {
  const payloadRoles: ConsoleRole[] = ['operator', 'approver'];
  const allowed = (roles: ConsoleRole[]) =>
    (['view', 'plan', 'approve', 'execute', 'read-payload'] as ConsoleAction[]).filter((action) =>
      mayDo({ name: 'x', roles }, action, payloadRoles),
    );

  it('lets a viewer view only: no plan, approval, execution or payload', () => {
    expect(allowed(['viewer'])).toEqual(['view']);
  });

  it('lets an operator plan and execute, never approve', () => {
    expect(allowed(['operator'])).toEqual(['view', 'plan', 'execute', 'read-payload']);
  });

  it('lets an approver approve, never plan or execute', () => {
    expect(allowed(['approver'])).toEqual(['view', 'approve', 'read-payload']);
  });

  it('lets a user without roles do nothing', () => {
    expect(allowed([])).toEqual([]);
  });

  it('gives payloads to the configured roles only', () => {
    expect(mayDo({ name: 'v', roles: ['viewer'] }, 'read-payload', ['viewer'])).toBe(true);
    expect(mayDo({ name: 'o', roles: ['operator'] }, 'read-payload', [])).toBe(false);
  });
});
