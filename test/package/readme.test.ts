/**
 * Every TypeScript snippet in README.md compiles as a complete program (strict), against the
 * package's entry points as users import them (`sluice`, `sluice/history`, … — mapped to the
 * sources named by package.json "exports") and the real SDKs they use (installed dev
 * dependencies). A snippet meant as a fragment says so on the line before its fence:
 *
 *   <!-- snippet: partial -->
 *
 * and is skipped. test/package/package.test.ts also runs the Library snippet against the packed
 * package.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');

interface Snippet {
  line: number;
  code: string;
  partial: boolean;
}

export function readmeSnippets(markdown: string): Snippet[] {
  const out: Snippet[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i])) continue;
    let prev = i - 1;
    while (prev >= 0 && lines[prev].trim() === '') prev--;
    const partial = prev >= 0 && /^<!--\s*snippet:\s*partial\b.*-->$/.test(lines[prev].trim());
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    out.push({ line: start + 1, code: lines.slice(start, end).join('\n'), partial });
    i = end;
  }
  return out;
}

/** `sluice` / `sluice/<entry>` → the source file its build comes from (package.json "exports"). */
function entryPaths(): Record<string, string[]> {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
  const paths: Record<string, string[]> = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue;
    const types = (target as { require: { types: string } }).require.types; // ./dist/src/x.d.ts, from src/x.ts
    paths[key === '.' ? 'sluice' : `sluice/${key.slice(2)}`] = [path.join(ROOT, types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts'))];
  }
  return paths;
}

test('the extractor finds fences and partial markers', () => {
  const md = ['x', '```ts', 'const a = 1;', '```', '', '<!-- snippet: partial -->', '', '```ts', 'b;', '```', '```sh', 'ls', '```'].join('\n');
  expect(readmeSnippets(md)).toEqual([
    { line: 3, code: 'const a = 1;', partial: false },
    { line: 9, code: 'b;', partial: true },
  ]);
});

test('every complete TypeScript snippet in README.md compiles as a program', () => {
  const snippets = readmeSnippets(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')).filter((s) => !s.partial);
  expect(snippets.length).toBeGreaterThanOrEqual(1);
  // Inside the repository (node_modules/.cache), so the snippets' own imports (zod, the SDKs) resolve.
  const dir = path.join(ROOT, 'node_modules', '.cache', 'sluice-readme-snippets');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const files = snippets.map((s) => {
    const file = path.join(dir, `readme-line-${s.line}.ts`);
    fs.writeFileSync(file, s.code);
    return file;
  });
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    moduleDetection: ts.ModuleDetectionKind.Force,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    esModuleInterop: true,
    resolveJsonModule: true,
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules/@types')],
    paths: entryPaths(),
  });
  const problems = ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file === undefined || files.includes(d.file.fileName))
    .map((d) => {
      const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      const snippetLine = d.file ? Number(/readme-line-(\d+)/.exec(d.file.fileName)?.[1]) : NaN;
      return `README.md:${where ? snippetLine + where.line : '?'}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
  if (problems.length > 0) {
    throw new Error(
      `README snippets that do not compile as programs (complete them, or mark a fragment with <!-- snippet: partial --> on the line before its fence):\n${problems.join('\n')}`,
    );
  }
}, 180_000);
