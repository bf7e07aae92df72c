/**
 * The loop probe (loopProbe.ts) as a child gateway preloads it: the .ts file for a child under
 * ts-node, or, for the built CLI, the same file transpiled once to plain JavaScript in the temp
 * directory — so that a built child loads no ts-node (a compiler in its heap would change the
 * start-up RSS and what memory comes back after a burst).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';

const SOURCE = path.join(__dirname, 'loopProbe.ts');
let built: string | undefined;

export function loopProbeFile(forBuiltCli: boolean): string {
  if (!forBuiltCli) return SOURCE;
  if (built) return built;
  const js = ts.transpileModule(fs.readFileSync(SOURCE, 'utf8'), { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  built = path.join(os.tmpdir(), `sluice-loopProbe-${process.pid}.js`);
  fs.writeFileSync(built, js);
  return built;
}
