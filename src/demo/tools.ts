import { classifierFor } from '../engine/runTurn';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { CallResult, RunToolInput } from '../../machines/toolCall.machine';
import type { Classification } from '../../machines/turn.machine';
import type { StandardSchemaV1 } from '../execute/standardSchema';
import { type AnyTool, createToolRegistry, defineTool, type JsonSchema, runTool, type ToolRegistry } from '../execute/tools';
import { DEMO_LATENCY_MS } from './script';

/**
 * The demo's real tools: read_file, grep and edit_file, confined to one workspace folder.
 *
 * Each tool does its real work on the files, then waits `latencyMs` (abortable): the round trip
 * to a sandbox or a remote workspace that real agents pay per tool call. Local file operations
 * take well under a millisecond, so without it there would be nothing to overlap with the stream;
 * the demo prints these latencies, they are not hidden.
 */

export interface DemoToolOptions {
  /** The workspace folder every path is resolved in (paths may not leave it). */
  root: string;
  /** Per-tool latency in ms (sandbox round trip), by tool name. */
  latencyMs?: Partial<Record<'read_file' | 'grep' | 'edit_file', number>>;
}

export { DEMO_LATENCY_MS };

/** Resolve `p` inside `root`; throws when it would escape. */
export function resolveInside(root: string, p: string): string {
  const abs = path.resolve(root, p);
  const rel = path.relative(root, abs);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`path is outside the workspace: ${p}`);
  return abs;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new Error('aborted'));
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

async function walk(dir: string, out: string[]): Promise<void> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else if (e.isFile()) out.push(p);
  }
}

/** `text`: a non-empty string; `any`: any string; `optional`: a string or absent. */
type FieldRule = 'text' | 'any' | 'optional';
type FieldsOf<R extends Record<string, FieldRule>> = { [K in keyof R as R[K] extends 'optional' ? never : K]: string } & {
  [K in keyof R as R[K] extends 'optional' ? K : never]?: string;
};

/**
 * The demo tools' input: an object of string fields, as a Standard Schema with its JSON Schema.
 * Written out, not zod: zod is an optional peer dependency, and `sluice demo` runs without it.
 */
function stringFields<R extends Record<string, FieldRule>>(rules: R): { input: StandardSchemaV1<Record<string, unknown>, FieldsOf<R>>; jsonSchema: JsonSchema } {
  const entries = Object.entries(rules);
  const validate = (value: unknown): StandardSchemaV1.Result<FieldsOf<R>> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { issues: [{ message: 'expected an object' }] };
    const v = value as Record<string, unknown>;
    const issues: StandardSchemaV1.Issue[] = [];
    for (const [key, rule] of entries) {
      const f = v[key];
      if (f === undefined && rule === 'optional') continue;
      if (typeof f !== 'string') issues.push({ message: 'expected a string', path: [key] });
      else if (rule === 'text' && f === '') issues.push({ message: 'expected a non-empty string', path: [key] });
    }
    return issues.length > 0 ? { issues } : { value: value as FieldsOf<R> };
  };
  const properties = Object.fromEntries(entries.map(([key, rule]) => [key, rule === 'text' ? { type: 'string', minLength: 1 } : { type: 'string' }]));
  const required = entries.filter(([, rule]) => rule !== 'optional').map(([key]) => key);
  return { input: { '~standard': { version: 1, vendor: 'sluice-demo', validate } }, jsonSchema: { type: 'object', properties, required, additionalProperties: false } };
}

export function demoTools(opts: DemoToolOptions): AnyTool[] {
  const root = opts.root;
  const lat = { ...DEMO_LATENCY_MS, ...(opts.latencyMs ?? {}) };
  const readFile = defineTool({
    name: 'read_file',
    kind: 'read',
    description: 'Read a text file of the workspace.',
    ...stringFields({ path: 'text' }),
    async run(input, { signal }) {
      const text = await fs.readFile(resolveInside(root, input.path), 'utf8');
      await sleep(lat.read_file, signal);
      return text
        .split('\n')
        .map((l, i) => `${String(i + 1).padStart(4)}  ${l}`)
        .join('\n');
    },
  });
  const grep = defineTool({
    name: 'grep',
    kind: 'search',
    description: 'Search the workspace for a literal string; prints file:line: text.',
    ...stringFields({ pattern: 'text', path: 'optional' }),
    async run(input, { signal }) {
      const files: string[] = [];
      await walk(resolveInside(root, input.path ?? '.'), files);
      const hits: string[] = [];
      for (const f of files) {
        const lines = (await fs.readFile(f, 'utf8')).split('\n');
        lines.forEach((l, i) => {
          if (l.includes(input.pattern)) hits.push(`${path.relative(root, f)}:${i + 1}: ${l.trim()}`);
        });
      }
      await sleep(lat.grep, signal);
      return hits.length > 0 ? hits.join('\n') : 'no matches';
    },
  });
  const editFile = defineTool({
    name: 'edit_file',
    kind: 'edit',
    description: 'Replace exactly one occurrence of `old` with `new` in a workspace file.',
    ...stringFields({ path: 'text', old: 'text', new: 'any' }),
    async run(input, { signal }) {
      const file = resolveInside(root, input.path);
      const text = await fs.readFile(file, 'utf8');
      const at = text.indexOf(input.old);
      if (at < 0) throw new Error(`edit_file: the text to replace was not found in ${input.path}`);
      if (text.indexOf(input.old, at + 1) >= 0) throw new Error(`edit_file: the text to replace occurs more than once in ${input.path}`);
      await sleep(lat.edit_file, signal);
      await fs.writeFile(file, text.slice(0, at) + input.new + text.slice(at + input.old.length));
      return `edited ${input.path} (1 replacement)`;
    },
  });
  return [readFile, grep, editFile];
}


/** The controller's `classify` and `runTool` for a registry of real tools. */
export function executorFor(registry: ToolRegistry): {
  classify: (name: string, input: Record<string, unknown>) => Classification;
  runTool: (call: RunToolInput, signal: AbortSignal) => Promise<CallResult>;
} {
  return {
    classify: classifierFor(registry),
    runTool: (call, signal) => runTool(registry.get(call.name), call.input, { signal, callId: call.callId, name: call.name }),
  };
}

export function demoRegistry(opts: DemoToolOptions): ToolRegistry {
  return createToolRegistry(demoTools(opts));
}
