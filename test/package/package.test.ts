/**
 * The package as users get it (issues 10, 19): `npm pack`, the tarball installed into a fresh ESM
 * project and a fresh CommonJS project, bundled there by esbuild (ESM, splitting), Vite (SSR build
 * for Node) and webpack (target node) — and by Rollup (node-resolve + commonjs) with
 * SLUICE_BUNDLERS=1 (`npm run test:bundlers`: Rollup's commonjs plugin takes ~3× the CPU of the
 * other three together on mvdan-sh) — and each bundle runs a turn, a TypeScript file importing every documented entry point
 * type-checked under `moduleResolution: "nodenext"` (both projects) and `"bundler"`, compiled and
 * run; the README's Library example (its code block, with the Anthropic client swapped for a
 * scripted stream) type-checked and run; the --inspect message without the optional peer.
 * The install is light: `npm install <tarball> zod` stays under 25 MB of node_modules, with no
 * OpenTelemetry SDK, exporter or protobuf (optional peers of `sluice serve`); after the documented
 * OTel install the installed gateway exports OTLP, and without it says in one line what to install.
 * Types compile with no "types" entry (`types: []`), also under the newest TypeScript from the
 * registry with SLUICE_BUNDLERS=1.
 *
 * Packs the current build (dist/; `npm ci` makes it); builds first when there is none. npm
 * fetches the dependencies with --prefer-offline (the npm cache from `npm ci` serves them).
 */
import { execFile, spawn } from 'node:child_process';
import { builtinModules } from 'node:module';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as url from 'node:url';
import { promisify } from 'node:util';
import { OTEL_PACKAGES } from '../../src/gateway/otel';
import { spansOf, startReceiver } from '../gateway/otlpReceiver';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'];

jest.setTimeout(300_000);
/**
 * Rollup too, and the newest TypeScript from the registry (npm run test:bundlers; ~1 min each on a
 * busy 2-core machine); CI runs esbuild, Vite and webpack, and the repository's TypeScript.
 */
const ALL_BUNDLERS = process.env.SLUICE_BUNDLERS === '1';

async function sh(file: string, args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(file, args, { cwd, maxBuffer: 32 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false' } });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${path.basename(file)} ${args.join(' ')} failed in ${cwd}:\n${e.stdout ?? ''}\n${e.stderr ?? ''}\n${e.message}`);
  }
}
const tsc = (cwd: string, project: string) => sh(process.execPath, [TSC, '-p', project], cwd);

/** The README's `## Library` code block, adapted: the Anthropic client becomes a scripted stream. */
function readmeExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Library'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error('README.md: no ts block under ## Library');
  const swap = (s: string, from: string, to: string): string => {
    if (!s.includes(from)) throw new Error(`README.md Library example no longer contains ${JSON.stringify(from)}: update this test`);
    return s.replace(from, to);
  };
  let out = swap(code, "import Anthropic from '@anthropic-ai/sdk';\n", '');
  out = swap(
    out,
    'const client = new Anthropic();',
    `// Package test: a scripted Anthropic stream (SDK event objects) instead of the API.
const client = { messages: { create: async (_request: object) => scripted() } };
async function* scripted() {
  const pause = () => new Promise((r) => setTimeout(r, 5));
  const events: object[] = [
    { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'scripted', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: {} } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"path":' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"README.md"}' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
    { type: 'message_stop' },
  ];
  for (const e of events) {
    await pause();
    yield e;
  }
}`,
  );
  return `${out}\nconsole.log('RESULT', JSON.stringify(history.at(-1)));\n`;
}

/** Imports every documented entry point; at run time checks the values and runs one turn. */
const CHECK_TS = `import { defineTool, runTurn, TurnController, type RunTurnOptions, type StandardSchemaV1 } from 'sluice';
import { checkHistory, repairHistory, toOpenAIChatMessages, type HistoryMessage } from 'sluice/history';
import { createTextParser, listFamilies, registerTextParsers } from 'sluice/parsers';
import { loadTextAdapterFactory, startGateway, startScriptedUpstream, type GatewayOptions } from 'sluice/gateway';
import { SseDecoder, type StreamEvent } from 'sluice/wire';
import { toolCallMachine } from 'sluice/machines';
import { parseTrace } from 'sluice/trace';
import { z } from 'zod';

const schema: StandardSchemaV1<{ q: string }> = z.object({ q: z.string() });
const search = defineTool({ name: 'search', kind: 'search', input: z.object({ q: z.string() }), run: ({ q }) => q.toUpperCase() });
const opts: GatewayOptions | undefined = undefined;
const history: HistoryMessage[] = [];
const policy: RunTurnOptions['policy'] = { earlyStart: 'safe' };
const values = { runTurn, TurnController, checkHistory, repairHistory, toOpenAIChatMessages, createTextParser, listFamilies, registerTextParsers, startGateway, startScriptedUpstream, loadTextAdapterFactory, SseDecoder, parseTrace };
for (const [name, v] of Object.entries(values)) if (typeof v !== 'function') throw new Error(name + ' is not a function');
if (listFamilies().length < 5) throw new Error('parsers missing');
if (typeof toolCallMachine !== 'object') throw new Error('toolCallMachine missing');
// sluice/gateway's text adapter factory (GatewayOptions.textAdapter) works from this module system.
const textAdapter: GatewayOptions['textAdapter'] = loadTextAdapterFactory();
const adapter = textAdapter?.('hermes', { tools: [] });
if (!adapter || typeof adapter.push !== 'function') throw new Error('no text adapter from sluice/gateway');
const event: StreamEvent['type'] = 'call.identity';
const chunk = (delta: object, finish_reason: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason }] });
runTurn({
  format: 'openai-chat',
  stream: [chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q":"hi"}' } }] }), chunk({}, 'tool_calls')],
  tools: [search],
  policy,
}).then(({ messages }) => {
  history.push(...messages);
  if (!checkHistory(history).ok) throw new Error('invalid history');
  console.log('CHECK', JSON.stringify(toOpenAIChatMessages(history, { system: 's' }).at(-1)), typeof schema, opts === undefined, event);
});
`;

function tsconfig(moduleKind: 'nodenext' | 'bundler', files: string[], libCheck = false): string {
  // Every run checks resolution and the user's code; one run (ESM, nodenext) also checks every
  // declaration file the package ships (no skipLibCheck): the same files for all, and the slow part.
  const module =
    moduleKind === 'nodenext'
      ? { module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: !libCheck }
      : { module: 'esnext', moduleResolution: 'bundler', noEmit: true, skipLibCheck: true };
  // No "types" entry: the package's declarations load Node's types themselves (@types/node is a
  // dependency). The run that checks the declarations says `types: []`, what TypeScript 6 and later
  // assume without the entry (this TypeScript would otherwise load every @types package it sees).
  const types = libCheck ? { types: [] } : {};
  return JSON.stringify({ compilerOptions: { target: 'es2022', lib: ['es2022'], strict: true, outDir: 'out', ...types, ...module }, files }, null, 2);
}

describe('the packed package', () => {
  let tmp: string;
  let tarball: string;
  let packed: string[];

  beforeAll(async () => {
    if (!fs.existsSync(path.join(ROOT, 'dist/src/index.js'))) {
      // No build yet (a fresh checkout without `npm ci`): tsc emits even with type errors elsewhere.
      await sh(process.execPath, [TSC, '-p', 'tsconfig.build.json'], ROOT).catch(() => undefined);
    }
    await sh(process.execPath, [path.join(ROOT, 'scripts/build.mjs'), '--esm'], ROOT); // the ESM build (~1 s)
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-pkg-'));
    const { stdout } = await sh('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp, '--loglevel=error'], ROOT);
    const info = JSON.parse(stdout)[0] as { filename: string; files: Array<{ path: string }> };
    tarball = path.join(tmp, info.filename);
    packed = info.files.map((f) => f.path);

    const project = (name: string, type: 'module' | 'commonjs') => {
      const dir = path.join(tmp, name);
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `${name}-consumer`, private: true, type }));
      fs.writeFileSync(path.join(dir, 'README.md'), '# a file for the example to read\n');
      return dir;
    };
    const esm = project('esm', 'module');
    const cjs = project('cjs', 'commonjs');
    // What a user types (docs/embedding.md): the tarball and a validator; nothing else.
    await Promise.all([esm, cjs].map((dir) => sh('npm', ['install', tarball, 'zod', ...NPM_FLAGS], dir)));
  });

  afterAll(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the tarball carries the build and the docs users need, not benches, tests, scripts or sources', () => {
    for (const f of ['package.json', 'README.md', 'dist/cjs/index.cjs', 'dist/src/index.d.ts', 'dist/esm/index.mjs', 'dist/esm/index.d.mts', 'dist/src/cli/main.js', 'dist/machines/turn.machine.js']) {
      expect(packed).toContain(f);
    }
    // What the package prints or documents is in it: the demo's closing hint names a shipped trace,
    // and the "prepare" script package.json names is shipped (it keeps the build; npm never runs it
    // for a tarball).
    expect(packed).toEqual(expect.arrayContaining(['examples/coding-turn.anthropic.trace.jsonl', 'examples/workspace/src/app.ts', 'scripts/prepare.mjs']));
    // Every docs/… and visualizations/… file the README (images included) or the CLI's help text
    // names is in the package, so the names work from node_modules/sluice.
    const named = [fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'), ...fs.readdirSync(path.join(ROOT, 'src/cli')).map((f) => fs.readFileSync(path.join(ROOT, 'src/cli', f), 'utf8'))]
      .flatMap((text) => [...text.matchAll(/\b((?:docs|visualizations)\/[\w.-]+\.(?:md|svg))\b/g)].map((m) => m[1]!));
    expect(named.length).toBeGreaterThan(5);
    expect([...new Set(named)].filter((f) => !packed.includes(f))).toEqual([]);
    const unwanted = packed.filter((f) => /^(dist\/(bench|scripts|test)\/|test\/|bench\/|src\/|scripts\/(?!prepare\.mjs$))|\.map$|\.tsbuildinfo$/.test(f));
    expect(unwanted).toEqual([]);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.private).toBeUndefined();
    expect(pkg.peerDependencies).toMatchObject({ zod: expect.any(String), '@statelyai/inspect': expect.any(String) });
    // Every peer is optional (zod too: any Standard Schema works; the OTel SDK only for `sluice serve` exports).
    const peers = Object.keys(pkg.peerDependencies as object);
    expect(pkg.peerDependenciesMeta).toEqual(Object.fromEntries(peers.map((p) => [p, { optional: true }])));
    expect(pkg.dependencies).not.toHaveProperty('zod');
    expect(Object.keys(pkg.dependencies as object).filter((d) => d.startsWith('@opentelemetry/'))).toEqual(['@opentelemetry/api']);
    // The documented import paths are exports keys (none with src/ or dist/), and every file an
    // exports entry names is in the tarball.
    const exportsMap = pkg.exports as Record<string, unknown>;
    expect(Object.keys(exportsMap)).toEqual(expect.arrayContaining(['.', './history', './parsers', './gateway']));
    for (const key of Object.keys(exportsMap)) expect(key).not.toMatch(/(^|\/)(src|dist)(\/|$)/);
    const leaves = (v: unknown): string[] => (typeof v === 'string' ? [v] : Object.values(v as object).flatMap(leaves));
    const targets = leaves(exportsMap).map((t) => t.replace(/^\.\//, ''));
    expect(targets.length).toBeGreaterThanOrEqual(17);
    expect(targets.filter((t) => !packed.includes(t))).toEqual([]);
  });

  test('npm install <tarball> zod is light: under 25 MB of node_modules, no OpenTelemetry SDK, exporter, OTLP transformer or protobuf', () => {
    const modules = path.join(tmp, 'esm', 'node_modules');
    const installed = packagesIn(modules);
    expect(installed).toEqual(expect.arrayContaining(['sluice', 'zod', 'xstate', '@types/node']));
    expect(installed.filter((n) => /^@opentelemetry\/(?!api$)|protobuf|^@grpc\//.test(n))).toEqual([]);
    const mb = treeBytes(modules) / (1024 * 1024);
    expect([Math.round(mb * 10) / 10, mb < 25]).toEqual([expect.any(Number), true]);
  });

  (ALL_BUNDLERS ? test : test.skip)('the newest TypeScript from the registry compiles every entry point with no "types" entry: nodenext (ESM and CommonJS), node16 and bundler (SLUICE_BUNDLERS=1)', async () => {
    const dir = path.join(tmp, 'ts-latest');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ private: true }));
    await sh('npm', ['install', 'typescript@latest', '--no-audit', '--no-fund', '--loglevel=error'], dir);
    const tscLatest = path.join(dir, 'node_modules/typescript/bin/tsc');
    const version = (JSON.parse(fs.readFileSync(path.join(dir, 'node_modules/typescript/package.json'), 'utf8')) as { version: string }).version;
    expect(Number(version.split('.')[0])).toBeGreaterThanOrEqual(6); // the releases that load no @types by default
    const configs: [string, string][] = [];
    for (const [project, kinds] of [['esm', ['nodenext', 'node16', 'bundler']], ['cjs', ['nodenext', 'node16']]] as const) {
      const pdir = path.join(tmp, project);
      fs.writeFileSync(path.join(pdir, 'check.ts'), CHECK_TS);
      for (const kind of kinds) {
        // A plain strict config: module and resolution, nothing else (no "types", no "lib").
        const module = kind === 'bundler' ? 'esnext' : kind;
        const file = `tsconfig.latest-${kind}.json`;
        fs.writeFileSync(path.join(pdir, file), JSON.stringify({ compilerOptions: { strict: true, module, moduleResolution: kind, noEmit: true }, files: ['check.ts'] }));
        configs.push([pdir, file]);
      }
    }
    const results = await Promise.all(configs.map(([pdir, file]) => sh(process.execPath, [tscLatest, '-p', file], pdir).then(() => `${path.basename(pdir)} ${file}: ok`, (e: Error) => `${path.basename(pdir)} ${file}: ${e.message}`)));
    expect(results).toEqual(configs.map(([pdir, file]) => `${path.basename(pdir)} ${file}: ok`));
  });

  test('ESM project: every entry point type-checks under nodenext and bundler, and runs; so does the README example', async () => {
    const dir = path.join(tmp, 'esm');
    fs.writeFileSync(path.join(dir, 'check.ts'), CHECK_TS);
    fs.writeFileSync(path.join(dir, 'example.ts'), readmeExample());
    fs.writeFileSync(path.join(dir, 'tsconfig.nodenext.json'), tsconfig('nodenext', ['check.ts', 'example.ts'], true));
    fs.writeFileSync(path.join(dir, 'tsconfig.bundler.json'), tsconfig('bundler', ['check.ts', 'example.ts']));
    await Promise.all([tsc(dir, 'tsconfig.nodenext.json'), tsc(dir, 'tsconfig.bundler.json')]);
    const check = await sh(process.execPath, ['out/check.js'], dir);
    expect(check.stdout).toContain('CHECK {"role":"tool","tool_call_id":"call_1","content":"HI"} object true call.identity');
    const example = await sh(process.execPath, ['out/example.js'], dir);
    expect(example.stdout.split('\n')).toEqual(
      expect.arrayContaining(['running read_file', 'done read_file', 'done []']),
    );
    const result = JSON.parse(example.stdout.split('\n').find((l) => l.startsWith('RESULT '))!.slice(7)) as HistoryTool;
    expect(result).toEqual({ role: 'tool', results: [{ callId: 'toolu_1', name: 'read_file', ok: true, content: '# a file for the example to read\n' }] });
  });

  test('CommonJS project: require() gets the same named exports and types (nodenext), and runs', async () => {
    const dir = path.join(tmp, 'cjs');
    fs.writeFileSync(path.join(dir, 'check.ts'), CHECK_TS);
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), tsconfig('nodenext', ['check.ts']));
    await tsc(dir, 'tsconfig.json');
    expect(fs.readFileSync(path.join(dir, 'out/check.js'), 'utf8')).toContain('require("sluice")');
    const check = await sh(process.execPath, ['out/check.js'], dir);
    expect(check.stdout).toContain('CHECK {"role":"tool","tool_call_id":"call_1","content":"HI"} object true call.identity');
    // The ESM build is its own (real ESM, not a face over CommonJS) with the same names per entry.
    const names = await sh(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createRequire } from 'node:module';
const req = createRequire(import.meta.url);
for (const e of ${JSON.stringify(ENTRY_NAMES)}) {
  const esm = Object.keys(await import(e)).sort().join();
  const cjs = Object.keys(req(e)).filter((k) => k !== '__esModule' && k !== 'default').sort().join();
  console.log(e, esm === cjs ? 'same' : 'DIFFERENT ' + esm + ' / ' + cjs);
}`,
      ],
      dir,
    );
    expect(names.stdout.trim().split('\n')).toEqual(ENTRY_NAMES.map((e) => `${e} same`));
    // CommonJS entries share one copy of each module (so sluice/parsers registers into sluice's runTurn).
    const shared = await sh(process.execPath, ['-e', "console.log(require('sluice').checkHistory === require('sluice/history').checkHistory)"], dir);
    expect(shared.stdout.trim()).toBe('true');
    for (const f of packed.filter((p) => p.startsWith('dist/esm/') && p.endsWith('.mjs'))) {
      // The operations listener's worker source is a CommonJS string run with { eval: true }: not module code.
      const code = fs.readFileSync(path.join(dir, 'node_modules/sluice', f), 'utf8').replace(/\/\/ sluice:eval-worker[^`]*`/g, '`');
      expect([f, /\brequire\(|from "\.\.\/src\//.test(code)]).toEqual([f, false]);
    }
  });

  test('esbuild bundles it (ESM, code splitting, minified): the bundle runs a turn; the entry chunk is small, the shell parser a lazy chunk of its own', async () => {
    const dir = path.join(tmp, 'esm');
    fs.writeFileSync(path.join(dir, 'app.mjs'), BUNDLE_APP);
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the repository's esbuild, used as a user would
    const esbuild = require(path.join(ROOT, 'node_modules/esbuild')) as typeof import('esbuild');
    const result = await esbuild.build({
      absWorkingDir: dir,
      entryPoints: ['app.mjs'],
      outdir: 'out-esbuild',
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      minify: true,
      outExtension: { '.js': '.mjs' },
      metafile: true,
      logLevel: 'silent',
    });
    expect(result.warnings.map((w) => w.text)).toEqual([]);
    const run = await sh(process.execPath, ['out-esbuild/app.mjs'], dir);
    expect(run.stdout.trim()).toBe(BUNDLE_OUT);
    const outputs = Object.entries(result.metafile.outputs);
    const entry = outputs.find(([, o]) => o.entryPoint === 'app.mjs')![1];
    expect(entry.bytes).toBeLessThanOrEqual(600 * 1024);
    expect(Object.keys(entry.inputs).some((i) => i.includes('mvdan-sh'))).toBe(false);
    expect(outputs.some(([, o]) => Object.keys(o.inputs).some((i) => i.includes('node_modules/zod/')))).toBe(false); // zod is off the library's path
    expect(outputs.some(([, o]) => Object.keys(o.inputs).some((i) => i.includes('node_modules/mvdan-sh/')))).toBe(true);
  });

  // Vite (ESM only) and webpack run in a child process, as a user's build script would run them.
  test('Vite bundles it (SSR build for Node, everything bundled): the bundle runs a turn, the shell parser in a lazy chunk', async () => {
    const dir = path.join(tmp, 'esm');
    fs.writeFileSync(path.join(dir, 'app.mjs'), BUNDLE_APP);
    const built = await buildScript(dir, `
const { build } = await import(${JSON.stringify(url.pathToFileURL(path.join(ROOT, 'node_modules/vite/dist/node/index.js')).href)});
const warnings = [];
const result = await build({
  configFile: false,
  root: process.cwd(),
  logLevel: 'silent',
  ssr: { target: 'node', noExternal: true }, // a server build leaves node_modules to Node unless told to bundle them
  build: {
    ssr: 'app.mjs',
    outDir: 'out-vite',
    emptyOutDir: true,
    minify: false, // CI time: the bundle's behaviour is tested here, its size in bench/package.ts
    rollupOptions: { output: { format: 'es', entryFileNames: '[name].mjs', chunkFileNames: '[name]-[hash].mjs' }, onwarn: (w) => void warnings.push(w.code + ': ' + w.message) },
  },
});
const outputs = (Array.isArray(result) ? result[0] : result).output;
console.log(JSON.stringify({ warnings, files: outputs.map((o) => o.fileName), entries: outputs.filter((o) => o.type === 'chunk' && o.isEntry).map((o) => o.fileName) }));
`);
    expect(built.warnings).toEqual([]);
    const run = await sh(process.execPath, ['out-vite/app.mjs'], dir);
    expect(run.stdout.trim()).toBe(BUNDLE_OUT);
    expectShellParserLazy(path.join(dir, 'out-vite'), built.files, built.entries);
  });

  test('webpack bundles it (target node, its default CommonJS output): the bundle runs a turn, the shell parser in a lazy chunk', async () => {
    const dir = path.join(tmp, 'esm');
    fs.writeFileSync(path.join(dir, 'app.mjs'), BUNDLE_APP);
    const built = await buildScript(dir, `
import { createRequire } from 'node:module';
import * as path from 'node:path';
const webpack = createRequire(${JSON.stringify(path.join(ROOT, 'package.json'))})('webpack');
const stats = await new Promise((resolve, reject) =>
  webpack(
    {
      mode: 'production',
      optimization: { minimize: false }, // CI time (terser takes a minute on mvdan-sh here); size is bench/package.ts's
      context: process.cwd(),
      entry: './app.mjs',
      target: 'node20',
      output: { path: path.resolve('out-webpack'), filename: 'app.cjs', chunkFilename: '[name].cjs' },
    },
    (err, st) => (err ? reject(err) : resolve(st)),
  ),
);
const info = stats.toJson({ all: false, errors: true, warnings: true, assets: true });
console.log(JSON.stringify({ errors: info.errors.map((e) => e.message), warnings: info.warnings.map((w) => w.moduleName + ': ' + w.message), files: info.assets.map((a) => a.name), entries: ['app.cjs'] }));
`);
    expect(built.errors).toEqual([]);
    // The one warning is mvdan-sh's own (its GopherJS output calls require dynamically; its chunk
    // runs regardless, as the turn's shell classification shows): none comes from sluice.
    expect(built.warnings.map((w) => w.split(':')[0])).toEqual(['./node_modules/mvdan-sh/index.js']);
    const run = await sh(process.execPath, ['out-webpack/app.cjs'], dir);
    expect(run.stdout.trim()).toBe(BUNDLE_OUT);
    expectShellParserLazy(path.join(dir, 'out-webpack'), built.files, built.entries);
  });

  (ALL_BUNDLERS ? test : test.skip)('Rollup bundles it (node-resolve + commonjs): the bundle runs a turn (SLUICE_BUNDLERS=1)', async () => {
    const dir = path.join(tmp, 'esm');
    fs.writeFileSync(path.join(dir, 'app.mjs'), BUNDLE_APP);
    const load = (m: string): unknown => require(path.join(ROOT, 'node_modules', m)); // eslint-disable-line @typescript-eslint/no-require-imports -- the repository's Rollup and plugins, used as a user would
    const { rollup } = load('rollup') as typeof import('rollup');
    const { nodeResolve } = load('@rollup/plugin-node-resolve') as typeof import('@rollup/plugin-node-resolve');
    const commonjs = (load('@rollup/plugin-commonjs') as { default: typeof import('@rollup/plugin-commonjs').default }).default;
    const warnings: string[] = [];
    const bundle = await rollup({
      input: path.join(dir, 'app.mjs'),
      plugins: [nodeResolve({ preferBuiltins: true }), commonjs()],
      external: (id) => id.startsWith('node:') || builtinModules.includes(id),
      onwarn: (w) => void warnings.push(`${w.code}: ${w.message}`),
    });
    await bundle.write({ dir: path.join(dir, 'out-rollup'), format: 'es', entryFileNames: '[name].mjs', chunkFileNames: '[name]-[hash].mjs' });
    await bundle.close();
    const run = await sh(process.execPath, ['out-rollup/app.mjs'], dir);
    expect(run.stdout.trim()).toBe(BUNDLE_OUT);
    expect(warnings.filter((w) => !w.startsWith('CIRCULAR_DEPENDENCY') && !w.startsWith('THIS_IS_UNDEFINED'))).toEqual([]);
  });

  test('the installed gateway translates a large body in its body worker, under require and under import', async () => {
    // One ~600 KB body (over the worker's 512 KiB threshold) through each build's gateway: the
    // worker file must be found next to dist/cjs and dist/esm (no fallback to the event loop).
    const program = (load: string): string => `${load}
const logs = [];
const note = (m) => void logs.push(m);
const logger = { enabled: () => true, log: (r) => note(r.msg), debug: note, info: note, warn: note, error: note };
const chunk = (delta, finish_reason = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason }] });
const up = await startScriptedUpstream({ script: [{ t: 0, data: chunk({ content: 'ok' }) }, { t: 0, data: chunk({}, 'stop') }, { t: 0, data: '[DONE]' }] });
const gw = await startGateway({ upstream: up.url, port: 0, logger, pingIntervalMs: 0 });
const text = 'x'.repeat(600000);
const res = await fetch(gw.url + '/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', max_tokens: 16, messages: [{ role: 'user', content: text }] }) });
await res.text();
const sent = JSON.stringify(up.requests[0]?.body ?? null);
await gw.close();
await up.close();
console.log(JSON.stringify({ status: res.status, backendGotText: sent.includes(text), worker: logs.filter((m) => m.startsWith('body_worker')) }));`;
    const runs = await Promise.all([
      sh(process.execPath, ['-e', `(async () => {\n${program("const { startGateway, startScriptedUpstream } = require('sluice/gateway');")}\n})();`], path.join(tmp, 'cjs')),
      sh(process.execPath, ['--input-type=module', '-e', program("import { startGateway, startScriptedUpstream } from 'sluice/gateway';")], path.join(tmp, 'esm')),
    ]);
    for (const r of runs) {
      expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toEqual({ status: 200, backendGotText: true, worker: ['body_worker'] });
    }
  });

  test('the installed CLI: `sluice demo` runs, and the command its closing hint prints works from the project', async () => {
    const dir = path.join(tmp, 'cjs');
    const bin = path.join(dir, 'node_modules/.bin/sluice');
    const demo = await sh(bin, ['demo', '--time-scale', '0.1'], dir);
    const hinted = /next: npx sluice replay (\S+)/.exec(demo.stdout)?.[1];
    expect(hinted).toMatch(/node_modules\/sluice\/examples\/coding-turn\.anthropic\.trace\.jsonl$/);
    const replay = await sh('npx', ['--no', 'sluice', 'replay', hinted!, '--json'], dir); // --no: never from the registry
    expect((JSON.parse(replay.stdout) as { calls: unknown[] }).calls.length).toBeGreaterThan(0);
  });

  test('`sluice serve` with OTEL_* but without the OpenTelemetry SDK: one line naming what to install, exit 1 (text and JSON logs)', async () => {
    const dir = path.join(tmp, 'cjs');
    const env = { ...noOtelEnv(), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    const fail = (args: string[]) =>
      run(path.join(dir, 'node_modules/.bin/sluice'), ['serve', '--upstream', 'scripted:demo', '--port', '0', ...args], { cwd: dir, env }).then(
        () => undefined,
        (e: { code?: number; stdout?: string; stderr?: string }) => e,
      );
    const [text, json] = await Promise.all([fail([]), fail(['--log-format', 'json'])]);
    const line =
      'OTEL_* asks for OTLP export, which needs the OpenTelemetry SDK (optional peer dependencies of sluice): npm install @opentelemetry/resources @opentelemetry/context-async-hooks @opentelemetry/core @opentelemetry/sdk-trace-base @opentelemetry/exporter-trace-otlp-proto @opentelemetry/sdk-metrics @opentelemetry/exporter-metrics-otlp-proto';
    expect([text?.code, text?.stdout, text?.stderr]).toEqual([1, '', `sluice serve: ${line}\n`]);
    expect(json?.code).toBe(1);
    expect(json?.stderr?.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([expect.objectContaining({ level: 'error', msg: 'startup_failed', error: line })]);
  });

  test('after the OTel install docs/observability.md gives, the installed `sluice serve` exports OTLP traces', async () => {
    const dir = path.join(tmp, 'gateway');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'gateway-consumer', private: true }));
    await sh('npm', ['install', tarball, ...documentedOtelInstall(), ...NPM_FLAGS], dir);
    const receiver = await startReceiver();
    try {
      const env = { ...noOtelEnv(), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'installed-gateway' };
      const child = spawn(path.join(dir, 'node_modules/.bin/sluice'), ['serve', '--upstream', 'scripted:demo', '--port', '0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          const m = /sluice gateway on (http:\/\/[\d.]+:\d+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        void exited.then((code) => reject(new Error(`serve exited (${code}): ${err}`)));
      });
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'go' }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
      child.kill('SIGTERM'); // drains, then flushes the exporters
      expect(await exited).toBe(0);
      const traces = receiver.posts.filter((p) => p.path === '/v1/traces');
      expect(traces.length).toBeGreaterThan(0);
      expect(traces[0]!.body.toString('utf8')).toContain('installed-gateway');
      expect(spansOf(receiver.posts).map((s) => s.kind)).toContain(2); // SpanKind.SERVER: the request's span
    } finally {
      await receiver.close();
    }
  });

  test('--inspect-log without the optional peer @statelyai/inspect: one line that says what to install', async () => {
    const dir = path.join(tmp, 'cjs');
    const trace = path.join(ROOT, 'examples/coding-turn.anthropic.trace.jsonl');
    const failed = await run(path.join(dir, 'node_modules/.bin/sluice'), ['replay', trace, '--inspect-log', 'x.jsonl'], { cwd: dir }).then(
      () => undefined,
      (e: { code?: number; stderr?: string }) => e,
    );
    expect(failed?.code).toBe(2); // a usage error
    expect(failed?.stderr).toBe(
      'sluice replay: --inspect and --inspect-log need the optional package @statelyai/inspect: npm install @statelyai/inspect (see sluice replay --help)\n',
    );
  });
});

interface Built {
  files: string[];
  entries: string[];
  warnings: string[];
  errors?: string[];
}

/** Runs a bundler's build script (ESM) in `dir`; it prints one JSON line (Built). */
async function buildScript(dir: string, script: string): Promise<Built> {
  const { stdout } = await sh(process.execPath, ['--input-type=module', '-e', script], dir);
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Built;
}

/** Every package installed under `modules` (nested node_modules too), by name. */
function packagesIn(modules: string): string[] {
  const names: string[] = [];
  if (!fs.existsSync(modules)) return names;
  for (const e of fs.readdirSync(modules, { withFileTypes: true })) {
    if (!e.isDirectory() || e.name.startsWith('.')) continue;
    const dirs = e.name.startsWith('@') ? fs.readdirSync(path.join(modules, e.name)).map((n) => `${e.name}/${n}`) : [e.name];
    for (const name of dirs) names.push(name, ...packagesIn(path.join(modules, name, 'node_modules')));
  }
  return names;
}

/** The bytes of every file under `dir` (what the files hold, not the blocks they take). */
function treeBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += treeBytes(p);
    else if (e.isFile()) total += fs.statSync(p).size;
  }
  return total;
}

/** This process's environment without any OTEL_* variable. */
function noOtelEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
}

/**
 * The packages of the `npm install` line docs/observability.md gives for OTLP export from `sluice
 * serve`: exactly the optional peers src/gateway/otel.ts loads (both protocols).
 */
function documentedOtelInstall(): string[] {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/observability.md'), 'utf8');
  const line = doc.split('\n').find((l) => /^npm install .*@opentelemetry\/sdk-trace-base/.test(l));
  if (!line) throw new Error('docs/observability.md: no `npm install … @opentelemetry/sdk-trace-base …` line');
  const names = line.split(/\s+/).filter((w) => w.startsWith('@opentelemetry/'));
  expect([...names].sort()).toEqual([...new Set(Object.values(OTEL_PACKAGES).flat())].sort());
  return names;
}

/** The bundle's entry file does not hold the shell parser (mvdan-sh); exactly one other file does. */
function expectShellParserLazy(outDir: string, files: string[], entries: string[]): void {
  const marker = 'mvdan.cc/sh/v3/syntax'; // in mvdan-sh's code, nowhere else
  const holding = files.filter((f) => fs.readFileSync(path.join(outDir, f), 'utf8').includes(marker));
  expect(entries).toHaveLength(1);
  expect(holding).toHaveLength(1);
  expect(entries).not.toContain(holding[0]);
}

const ENTRY_NAMES = ['sluice', 'sluice/history', 'sluice/parsers', 'sluice/gateway', 'sluice/wire', 'sluice/machines', 'sluice/trace'];

/**
 * A program that imports only what an agent needs (`runTurn`, `defineTool`) and runs a turn with a
 * shell tool, so the lazily loaded shell parser must come along in the bundle (as its own chunk).
 * No validator package: the bundle then holds only sluice and what sluice itself loads.
 */
const BUNDLE_APP = `import { classifyCommand, defineTool, runTurn } from 'sluice';

// A Standard Schema written out (no validator package), so the bundle holds sluice and its dependencies only.
const strings = (...keys) => ({
  '~standard': {
    version: 1,
    vendor: 'app',
    validate: (v) => (keys.every((k) => typeof v?.[k] === 'string') ? { value: v } : { issues: [{ message: 'expected strings: ' + keys.join(', ') }] }),
  },
});
const shell = defineTool({ name: 'shell', kind: 'execute', input: strings('command'), jsonSchema: { type: 'object' }, run: ({ command }) => 'ran ' + command.length });
const read = defineTool({ name: 'read', kind: 'read', input: strings('path'), jsonSchema: { type: 'object' }, run: ({ path }) => 'read ' + path });
const chunk = (delta, finish_reason = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason }] });
const call = (index, id, name, args) => chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: args } }] });
const { messages, summary } = await runTurn({
  format: 'openai-chat',
  stream: [call(0, 'c1', 'read', '{"path":"a.txt"}'), call(1, 'c2', 'shell', '{"command":"ls -l | grep x"}'), chunk({}, 'tool_calls')],
  tools: [read, shell],
});
console.log('TURN', summary.outcome, JSON.stringify(messages.at(-1).results.map((r) => r.content)), classifyCommand('ls -l').readOnly);
`;
const BUNDLE_OUT = 'TURN done ["read a.txt","ran 14"] true';

interface HistoryTool {
  role: 'tool';
  results: unknown[];
}
