// Requires every package of the image's node_modules, in the image (`.ci/containers.sh` mounts it as
// /app/check-dependencies-load.cjs): docker/prune-node-modules.sh deletes files by rule and
// docker/runtime-root.sh copies libraries by what ldd finds, and a package that no longer loads would
// otherwise show only on the code path that needs it. Packages of type declarations alone are skipped.
'use strict';
const { readdirSync, readFileSync, existsSync } = require('node:fs');
const { join } = require('node:path');

const modules = join(__dirname, 'node_modules');
const names = readdirSync(modules)
  .filter((entry) => !entry.startsWith('.'))
  .flatMap((entry) =>
    entry.startsWith('@') ? readdirSync(join(modules, entry)).map((name) => `${entry}/${name}`) : [entry],
  );

/** A package with nothing to run: no main, no exports, no index.js (e.g. undici-types). */
function typesOnly(name) {
  const manifest = JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8'));
  return !manifest.main && !manifest.exports && !existsSync(join(modules, name, 'index.js'));
}

const failures = [];
for (const name of names) {
  if (typesOnly(name)) continue;
  try {
    require(name);
  } catch (error) {
    // Packages whose exports map has no main entry (only subpaths) load through those; not a failure.
    if (error.code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED')
      failures.push(`${name}: ${error.message.split('\n')[0]}`);
  }
}
console.log(`${names.length} packages in node_modules, ${failures.length} that do not load`);
if (failures.length > 0) {
  console.log(failures.join('\n'));
  process.exitCode = 1;
}
