/**
 * `prepare` (npm runs it on `npm install` in a checkout, before `npm pack` / `npm publish`, and
 * when it installs sluice from a git URL — after installing sluice's dev dependencies — or links
 * a local folder, without them):
 *   - TypeScript is installed here → build (dist/);
 *   - otherwise a build is already here (a checkout built before) → keep it;
 *   - otherwise → one line saying what to do, and a failed install rather than a broken one.
 * A tarball from `npm pack` carries its build and never runs this.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc', { paths: [root] });
} catch {
  tsc = undefined;
}
const built = fs.existsSync(path.join(root, 'dist', 'src', 'index.js')) && fs.existsSync(path.join(root, 'dist', 'esm', 'index.mjs'));

if (tsc) {
  const run = (args) => spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' }).status;
  const status = run([tsc, '-p', 'tsconfig.build.json']) || run([path.join(here, 'esm-entries.mjs')]);
  process.exitCode = status ?? 1;
} else if (!built) {
  process.stderr.write(
    `sluice: ${root} has no build (dist/) and no TypeScript to make one: run \`npm ci\` there first (it builds), or install the tarball \`npm pack\` makes there\n`,
  );
  process.exitCode = 1;
}
