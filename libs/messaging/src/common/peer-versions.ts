/**
 * Peers whose major must follow Nest's: each line's packages are made for one Nest major, and npm does not
 * stop a mismatch (`@nestjs/typeorm` 12 declares Nest 11 as a peer but is ES modules only, which a CommonJS
 * Nest 11 application's Jest cannot load).
 */
const FOLLOW_NEST_MAJOR = ['@nestjs/typeorm', '@nestjs/microservices'] as const;

/**
 * Warnings for installed peers whose major differs from `@nestjs/core`'s, each naming the install command that
 * fixes it. `versionOf` answers a package's installed version, or undefined when it is not installed.
 */
export function peerVersionWarnings(versionOf: (name: string) => string | undefined): string[] {
  const nest = major(versionOf('@nestjs/core'));
  if (nest === undefined) return [];
  return FOLLOW_NEST_MAJOR.flatMap((name) => {
    const peer = major(versionOf(name));
    if (peer === undefined || peer === nest) return [];
    return [
      `${name} ${peer}.x is installed beside Nest ${nest}: each major of ${name} is made for the same major of ` +
        `Nest${peer > nest ? ' (and 12 is ES modules only)' : ''}. Install the matching one: npm i ${name}@${nest}`,
    ];
  });
}

/** The installed version of a package, read from its package.json; undefined when it is not installed. */
export function installedVersion(name: string): string | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a package's own manifest, read once at startup
    return (require(`${name}/package.json`) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

function major(version: string | undefined): number | undefined {
  const found = /^(\d+)\./.exec(version ?? '');
  return found ? Number(found[1]) : undefined;
}
