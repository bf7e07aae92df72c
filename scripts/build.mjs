/**
 * The build (`npm run build`; `prepare` runs it in a checkout):
 *   1. tsc -p tsconfig.build.json → dist/ : CommonJS, one file per module (dist/src, dist/machines,
 *      plus dist/bench and dist/scripts for the repository's own use) and the .d.ts files;
 *   2. esbuild → dist/esm/ : the ESM build of the package entry points, from the same sources,
 *      bundled with code splitting (shared chunks, `import()` kept lazy — the shell parser), every
 *      package dependency left as an import;
 *   3. Rollup → dist/cjs/<entry>.cjs : the CommonJS entry points, converted from that ESM build
 *      (same chunks, one copy of each module for all entries);
 *   4. dist/esm/<entry>.d.mts : re-export the entry's .d.ts, so `import` resolves typed under
 *      nodenext/node16/bundler (`require` uses the .d.ts files from step 1).
 * `node scripts/build.mjs --esm` runs steps 2–4 only (over an existing dist/ from tsc).
 * Why esbuild for ESM and tsc for CommonJS: docs/embedding.md ("How it is built").
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** Entry name → source module (keep in step with "exports" in package.json; test/package checks it). */
export const ENTRIES = {
  index: 'src/index',
  history: 'src/entries/history',
  parsers: 'src/parsers/index',
  gateway: 'src/entries/gateway',
  wire: 'src/entries/wire',
  machines: 'src/entries/machines',
  trace: 'src/entries/trace',
  dbos: 'src/entries/dbos',
};

/**
 * Internal entries: built beside the package entries (dist/esm/<name>.mjs, dist/cjs/<name>.cjs),
 * never exported. A worker thread's script is one: the module that starts it finds it next to
 * itself (src/gateway/worker/pool.ts `locateWorker`, through `SLUICE_MODULE_URL` in the ESM build
 * and `__filename` in CommonJS). An entry whose source is not there is skipped.
 */
export const INTERNAL_ENTRIES = {
  bodyWorker: 'src/gateway/worker/bodyWorker',
};

function allEntries() {
  const internal = Object.entries(INTERNAL_ENTRIES).filter(([, src]) => fs.existsSync(path.join(root, `${src}.ts`)));
  return { ...ENTRIES, ...Object.fromEntries(internal) };
}

export function buildCjs() {
  const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  return r.status ?? 1;
}

/**
 * esbuild's options for the ESM build (scripts/esm-options.json; test/dbos/packageBuild.ts builds
 * its package with the same): bundled, code splitting into chunks/, `.mjs`, Node 20. Every bare
 * import (node: builtins, xstate, mitt, mvdan-sh, @opentelemetry/api, zod, pg, …) stays an import
 * (`packages: external`): the user's node_modules / bundler resolves it, once. `SLUICE_MODULE_URL`
 * is a module's own URL where code needs its path (CommonJS has __filename; Rollup turns it into
 * the .cjs file's URL in dist/cjs).
 */
export const ESM_OPTIONS = JSON.parse(fs.readFileSync(path.join(root, 'scripts', 'esm-options.json'), 'utf8'));

export async function buildEsm() {
  const esbuild = require(require.resolve('esbuild', { paths: [root] }));
  const outdir = path.join(root, 'dist', 'esm');
  fs.rmSync(outdir, { recursive: true, force: true });
  const internal = new Set(Object.values(INTERNAL_ENTRIES).map((src) => path.join(root, `${src}.ts`)));
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(Object.entries(allEntries()).map(([name, src]) => [name, `${src}.ts`])),
    metafile: true,
    plugins: [
      {
        // An internal entry is a script (imports, no exports). Under "type": "commonjs" esbuild
        // takes such a file for CommonJS and wraps it and every module it imports in lazy-init
        // functions, in the shared chunks too; `export {}` keeps it an ES module.
        name: 'internal-entries-are-esm',
        setup(b) {
          b.onLoad({ filter: /\.ts$/ }, (args) =>
            internal.has(args.path) ? { contents: `${fs.readFileSync(args.path, 'utf8')}\nexport {};\n`, loader: 'ts' } : undefined,
          );
        },
      },
    ],
    outdir,
    ...ESM_OPTIONS,
  });
  const cjs = Object.entries(result.metafile.inputs).filter(([file, v]) => v.format === 'cjs' && !file.includes('node_modules/'));
  if (cjs.length > 0) throw new Error(`build: ${cjs.map(([f]) => f).join(', ')} bundled as CommonJS (a module with imports but no exports? add \`export {};\`)`);
  // esbuild's code splitting adds bare `import "./chunks/x.mjs"` lines to keep module evaluation
  // order. The package declares "sideEffects": false, so a consumer's bundler drops them anyway
  // (esbuild warns about each one it drops); drop them here so Node and bundlers load the same.
  // Anything a chunk exports that an entry uses is imported by name, and still loads it.
  for (const dir of [outdir, path.join(outdir, 'chunks')]) {
    for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.mjs'))) {
      const file = path.join(dir, f);
      const js = fs.readFileSync(file, 'utf8');
      const stripped = js.replace(/^import "\.\.?\/[^"]+\.mjs";\n/gm, '');
      if (stripped !== js) fs.writeFileSync(file, stripped);
    }
  }
  await buildCjsEntries(outdir);
  for (const [name, src] of Object.entries(ENTRIES)) {
    fs.writeFileSync(path.join(outdir, `${name}.d.mts`), `// Generated by scripts/build.mjs: the types of ${src}.ts.\nexport * from '../${src}.js';\n`);
  }
  return 0;
}

/**
 * dist/cjs/<entry>.cjs: the package's CommonJS entry points, converted by Rollup from the ESM
 * build above (so the same code splitting: a few files instead of one per module — most of the
 * cost of `require('sluice')` was Node resolving and compiling ~50 small files — and one copy of
 * each module shared by all entries, so `sluice/parsers` registers into the `runTurn` of `sluice`).
 */
async function buildCjsEntries(esmDir) {
  const { rollup } = require(require.resolve('rollup', { paths: [root] }));
  const outDir = path.join(root, 'dist', 'cjs');
  fs.rmSync(outDir, { recursive: true, force: true });
  const bundle = await rollup({
    input: Object.fromEntries(Object.keys(allEntries()).map((name) => [name, path.join(esmDir, `${name}.mjs`)])),
    external: (id) => !id.startsWith('.') && !path.isAbsolute(id),
    onwarn: (w) => {
      // An import the ESM build keeps for an external package it then tree-shook is harmless.
      if (w.code !== 'UNUSED_EXTERNAL_IMPORT') throw new Error(`rollup (CommonJS entries): ${w.code}: ${w.message}`);
    },
  });
  await bundle.write({
    dir: outDir,
    format: 'cjs',
    exports: 'named',
    entryFileNames: '[name].cjs',
    chunkFileNames: 'chunks/[name]-[hash].cjs',
    dynamicImportInCjs: false,
    interop: 'auto',
    generatedCode: 'es2015',
  });
  await bundle.close();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const esmOnly = process.argv.includes('--esm');
  let status = esmOnly ? 0 : buildCjs();
  if (status === 0) status = await buildEsm().catch((err) => {
    process.stderr.write(`${err.message}\n`);
    return 1;
  });
  process.exitCode = status;
}
