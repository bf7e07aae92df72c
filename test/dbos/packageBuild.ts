/**
 * The crash program (examples/dbos/crash-turn.mjs) imports `sluice` and `sluice/dbos` by their
 * package entry points, as in a built checkout. The tests build those two entries the way
 * scripts/build.mjs builds the ESM entries (esbuild, bundled with code splitting, every package
 * left as an import) into a private package folder, without touching the shared dist/:
 *
 *   node_modules/.cache/sluice-dbos-<hash>/node_modules/sluice/{package.json,dist/*.mjs}
 *   node_modules/.cache/sluice-dbos-<hash>/crash-turn.mjs   (a copy of the example)
 *
 * Bare imports (xstate, pg, zod, @dbos-inc/dbos-sdk) resolve upwards to this repository's
 * node_modules. Cached under a hash of the sources' paths, sizes and mtimes.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');
const EXAMPLE = path.join(ROOT, 'examples/dbos/crash-turn.mjs');

function walk(dir: string, out: string[]): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith('.ts')) out.push(p);
  }
}

export interface PackageBuild {
  dir: string;
  /** The example's copy, run with `node`. */
  program: string;
  /** esbuild's metafile: which output imports what. */
  meta: { outputs: Record<string, { imports: Array<{ path: string; kind: string; external?: boolean }>; entryPoint?: string }> };
}

let built: PackageBuild | undefined;

export async function buildPackage(): Promise<PackageBuild> {
  if (built) return built;
  const files: string[] = [EXAMPLE, path.join(ROOT, 'scripts', 'esm-options.json')];
  walk(path.join(ROOT, 'src'), files);
  walk(path.join(ROOT, 'machines'), files);
  files.sort();
  const h = crypto.createHash('sha256');
  for (const f of files) {
    const st = fs.statSync(f);
    h.update(`${f}\0${st.size}\0${st.mtimeMs}\n`);
  }
  const cache = path.join(ROOT, 'node_modules', '.cache');
  const dir = path.join(cache, `sluice-dbos-${h.digest('hex').slice(0, 16)}`);
  const metaFile = path.join(dir, 'meta.json');
  if (!fs.existsSync(path.join(dir, '.complete'))) {
    fs.mkdirSync(cache, { recursive: true });
    const tmp = fs.mkdtempSync(path.join(cache, 'sluice-dbos-build-'));
    const pkg = path.join(tmp, 'node_modules', 'sluice');
    fs.mkdirSync(pkg, { recursive: true });
    fs.writeFileSync(
      path.join(pkg, 'package.json'),
      JSON.stringify({ name: 'sluice', type: 'module', sideEffects: false, exports: { '.': './dist/index.mjs', './dbos': './dist/dbos.mjs' } }, null, 2),
    );
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- esbuild's JS API, loaded only here
    const esbuild = require('esbuild') as typeof import('esbuild');
    const result = await esbuild.build({
      absWorkingDir: ROOT,
      entryPoints: { index: 'src/index.ts', dbos: 'src/entries/dbos.ts' },
      metafile: true,
      outdir: path.join(pkg, 'dist'),
      ...(JSON.parse(fs.readFileSync(path.join(ROOT, 'scripts', 'esm-options.json'), 'utf8')) as import('esbuild').BuildOptions),
    });
    fs.writeFileSync(path.join(tmp, 'meta.json'), JSON.stringify(result.metafile));
    fs.copyFileSync(EXAMPLE, path.join(tmp, 'crash-turn.mjs'));
    fs.writeFileSync(path.join(tmp, '.complete'), '');
    try {
      fs.renameSync(tmp, dir);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true }); // another test process built it first
    }
  }
  const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8')) as PackageBuild['meta'];
  built = { dir, program: path.join(dir, 'crash-turn.mjs'), meta };
  return built;
}
