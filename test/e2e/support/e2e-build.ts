import { BuiltServices, builtServicesAt } from '../../../tools/demo/build-services';

/** Set by the e2e global setup: where it compiled the services for this run. */
export const E2E_BUILD_DIR_VARIABLE = 'E2E_SERVICES_BUILD_DIR';

/** The services compiled once for this run by the e2e global setup. */
export function e2eBuild(): BuiltServices {
  const dir = process.env[E2E_BUILD_DIR_VARIABLE];
  if (!dir)
    throw new Error(
      `${E2E_BUILD_DIR_VARIABLE} is not set: run the e2e suites through jest (--selectProjects e2e).`,
    );
  return builtServicesAt(dir);
}
