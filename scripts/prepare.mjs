/**
 * `prepare` (npm runs it on `npm install` in a checkout, before `npm pack` / `npm publish`, and
 * when it installs sluice from a git URL — after installing sluice's dev dependencies — or links
 * a local folder, without them):
 *   - a checkout (the sources are here) with TypeScript and esbuild installed → build (dist/,
 *     scripts/build.mjs);
 *   - otherwise a build is already here (a built checkout, or the installed package, which
 *     ships this file and its build but no sources) → keep it;
 *   - otherwise → one line saying what to do, and a failed install rather than a broken one.
 * npm never runs it when it installs the tarball; it is shipped so the name in "scripts" exists.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const resolvable = (id) => {
  try {
    createRequire(path.join(root, 'package.json')).resolve(id);
    return true;
  } catch {
    return false;
  }
};
const checkout = fs.existsSync(path.join(root, 'src', 'index.ts')) && fs.existsSync(path.join(here, 'build.mjs'));
const tools = checkout && resolvable('typescript/bin/tsc') && resolvable('esbuild');
const built = ['dist/src/cli/main.js', 'dist/cjs/index.cjs', 'dist/esm/index.mjs'].every((f) => fs.existsSync(path.join(root, f)));

if (tools) {
  const { buildCjs, buildEsm } = await import('./build.mjs');
  process.exitCode = buildCjs() || (await buildEsm());
} else if (!built) {
  process.stderr.write(
    `sluice: ${root} has no build (dist/) and no TypeScript/esbuild to make one: run \`npm ci\` there first (it builds), or install the tarball \`npm pack\` makes there\n`,
  );
  process.exitCode = 1;
}
