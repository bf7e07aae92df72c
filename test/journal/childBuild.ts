/**
 * Child processes for the crash tests run plain `node` on a one-time transpile of the sources
 * (TypeScript `transpileModule`, no type check) into a temporary folder: starting ts-node per
 * child would cost seconds, and the crash suite starts hundreds of them. Bare imports resolve
 * through NODE_PATH to this repository's node_modules.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const DIRS = ['src', 'machines', 'test/journal'];

let built: string | undefined;

function walk(dir: string, out: string[]): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && !e.name.endsWith('.test.ts')) out.push(p);
  }
}

/** Transpile once per test process; returns the folder that mirrors the repository layout. */
export function buildForChildren(): string {
  if (built) return built;
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-child-'));
  const files: string[] = [];
  for (const d of DIRS) walk(path.join(ROOT, d), files);
  for (const f of files) {
    const js = ts.transpileModule(fs.readFileSync(f, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
      fileName: f,
    }).outputText;
    const dest = path.join(out, path.relative(ROOT, f)).replace(/\.ts$/, '.js');
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.writeFileSync(dest, js);
  }
  built = out;
  return out;
}

/** Environment for a child: bare imports from this repository's node_modules. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules'), ...extra };
}
