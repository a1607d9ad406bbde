import type { ConsoleAuthenticator, ConsoleRole, ConsoleUser } from 'nest-reliable-messaging/console';
import { z } from 'zod';
import { isPasswordHash, verifyPassword } from './password-hash';

const ROLES = ['viewer', 'operator', 'approver'] as const satisfies readonly ConsoleRole[];

const usersSchema = z
  .array(
    z.strictObject({
      name: z.string().regex(/^[A-Za-z0-9._@-]{1,64}$/, 'letters, digits, ".", "_", "@" or "-", at most 64'),
      roles: z.array(z.enum(ROLES)).min(1),
      passwordHash: z
        .string()
        .refine(
          isPasswordHash,
          'a scrypt hash (node dist/apps/ops-console/apps/ops-console/src/main.js hash-password)',
        ),
    }),
  )
  .min(1);

/** A console user as configured: name, roles, scrypt hash of the password. */
export type ConfiguredUser = z.infer<typeof usersSchema>[number];

/** Parses `CONSOLE_USERS`: a JSON array of `{ name, roles, passwordHash }`. Throws naming what is wrong. */
export function parseConsoleUsers(json: string): ConfiguredUser[] {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    throw new Error('CONSOLE_USERS is not JSON: give [{ "name", "roles": [...], "passwordHash" }].');
  }
  const parsed = usersSchema.safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`CONSOLE_USERS is invalid: ${issues}`);
  }
  const names = parsed.data.map((u) => u.name.toLowerCase());
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new Error(`CONSOLE_USERS names '${twice}' twice.`);
  return parsed.data;
}

/**
 * The ops console's simple authenticator: users, roles and scrypt password hashes from the environment
 * (`CONSOLE_USERS`). For a small team on a private network; put a real identity provider behind
 * `ConsoleAuthenticator` for anything more.
 */
export class EnvironmentAuthenticator implements ConsoleAuthenticator {
  /** A hash of nothing: an unknown name costs as much as a wrong password. */
  private readonly decoy: Promise<string>;

  constructor(private readonly users: readonly ConfiguredUser[]) {
    this.decoy = Promise.resolve(users[0]?.passwordHash ?? '');
  }

  async authenticate(name: string, password: string): Promise<ConsoleUser | undefined> {
    const user = this.users.find((u) => u.name === name);
    const ok = await verifyPassword(password, user?.passwordHash ?? (await this.decoy));
    return user && ok ? { name: user.name, roles: user.roles } : undefined;
  }

  /** Whether a user of this name is configured (in any case: the console's throttle ignores case). */
  knows(name: string): boolean {
    return this.users.some((u) => u.name.toLowerCase() === name.toLowerCase());
  }
}
