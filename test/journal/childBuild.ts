/**
 * Child processes for the crash tests run plain `node` on a one-time transpile of the sources
 * (TypeScript `transpileModule`, no type check) into a cached temporary folder: starting ts-node per
 * child would cost seconds, and the crash suite starts hundreds of them. Bare imports resolve
 * through NODE_PATH to this repository's node_modules.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const DIRS = ['src', 'machines', 'test/journal', 'test/faults'];

let built: string | undefined;

function walk(dir: string, out: string[]): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && !e.name.endsWith('.test.ts')) out.push(p);
  }
}

/**
 * Transpile once; the output is cached in the OS temp folder under a hash of every source file's
 * path, size and mtime, so the test files that need it (and later runs) share one build.
 */
export function buildForChildren(): string {
  if (built) return built;
  const files: string[] = [];
  for (const d of DIRS) walk(path.join(ROOT, d), files);
  files.sort();
  const h = crypto.createHash('sha256');
  for (const f of files) {
    const st = fs.statSync(f);
    h.update(`${f}\0${st.size}\0${st.mtimeMs}\n`);
  }
  const final = path.join(os.tmpdir(), `sluice-child-${h.digest('hex').slice(0, 16)}`);
  if (fs.existsSync(path.join(final, '.complete'))) return (built = final);
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-child-build-'));
  for (const f of files) {
    const js = ts.transpileModule(fs.readFileSync(f, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
      fileName: f,
    }).outputText;
    const dest = path.join(out, path.relative(ROOT, f)).replace(/\.ts$/, '.js');
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.writeFileSync(dest, js);
  }
  fs.writeFileSync(path.join(out, '.complete'), '');
  try {
    fs.renameSync(out, final);
  } catch {
    // Another test process finished the same build first: use it.
    fs.rmSync(out, { recursive: true, force: true });
  }
  // Builds of older sources (an hour untouched) go.
  for (const e of fs.readdirSync(os.tmpdir())) {
    const p = path.join(os.tmpdir(), e);
    if (!/^sluice-child-[0-9a-f]{16}$/.test(e) || p === final) continue;
    try {
      if (Date.now() - fs.statSync(p).mtimeMs > 3_600_000) fs.rmSync(p, { recursive: true, force: true });
    } catch {
      /* another process removed it */
    }
  }
  return (built = final);
}

/** The `sluice` CLI (src/cli/main.ts) in the build: `node <it> serve …` without ts-node. */
export function childCli(): string {
  return path.join(buildForChildren(), 'src/cli/main.js');
}

/** Environment for a child: bare imports from this repository's node_modules. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules'), ...extra };
}
