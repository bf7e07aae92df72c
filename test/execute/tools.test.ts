import { z } from 'zod';
import {
  createToolRegistry,
  defineTool,
  formatToolOutput,
  needsApproval,
  runTool,
  toAnthropicTools,
  toGeminiSchema,
  toGeminiTools,
  toOpenAIChatTools,
  toOpenAIResponsesTools,
  validateInput,
  type JsonSchema,
} from '../../src/execute/tools';
import { loadShellParser } from '../../src/execute/shell';

// The shell parser loads asynchronously (runTurn awaits it); these tests classify directly.
beforeAll(() => loadShellParser());

const readFile = defineTool({
  name: 'read_file',
  kind: 'read',
  description: 'Read a file',
  input: z.object({
    path: z.string().describe('File path'),
    offset: z.number().int().min(0).optional(),
    encoding: z.enum(['utf8', 'base64']).default('utf8'),
  }),
  run: ({ path }) => `contents of ${path}`,
});

const bash = defineTool({
  name: 'bash',
  kind: 'execute',
  input: z.object({ command: z.string(), timeout: z.number().nullable().optional() }),
  needsApproval: (input) => input.command.startsWith('rm'),
  run: ({ command }) => ({ exitCode: 0, stdout: command.length }),
});

const editFile = defineTool({
  name: 'edit_file',
  kind: 'edit',
  input: z.object({
    path: z.string(),
    edits: z.array(z.object({ old: z.string(), new: z.string() })).min(1),
    mode: z.literal('replace'),
  }),
  needsApproval: true,
  run: () => 'ok',
});

const tools = [readFile, bash, editFile];

describe('defineTool', () => {
  test('rejects invalid names, kinds and non-object schemas at definition time', () => {
    expect(() => defineTool({ name: 'bad name', kind: 'read', input: z.object({}), run: () => '' })).toThrow(/invalid tool name/);
    expect(() => defineTool({ name: 'x'.repeat(65), kind: 'read', input: z.object({}), run: () => '' })).toThrow(/invalid tool name/);
    // @ts-expect-error -- kind outside ToolKind
    expect(() => defineTool({ name: 'ok', kind: 'writer', input: z.object({}), run: () => '' })).toThrow(/unknown kind/);
    expect(() =>
      // @ts-expect-error -- input must be an object schema
      defineTool({ name: 'ok', kind: 'read', input: z.string(), run: () => '' }),
    ).toThrow(/JSON object/);
    expect(() => defineTool({ name: 'ok', kind: 'read', input: z.object({}), timeoutMs: 0, run: () => '' })).toThrow(/timeoutMs/);
  });

  test('generates the input-side JSON schema without $schema', () => {
    expect(readFile.parameters.$schema).toBeUndefined();
    expect(readFile.parameters.type).toBe('object');
    // defaults make a field optional on the input side
    expect(readFile.parameters.required).toEqual(['path']);
  });
});

describe('registry and validation', () => {
  const registry = createToolRegistry(tools);

  test('get / has / names; unknown tool is undefined', () => {
    expect(registry.get('read_file')).toBe(readFile);
    expect(registry.has('bash')).toBe(true);
    expect(registry.get('nope')).toBeUndefined();
    expect(registry.names).toEqual(['read_file', 'bash', 'edit_file']);
  });

  test('duplicate names throw', () => {
    expect(() => createToolRegistry([readFile, readFile])).toThrow(/duplicate/);
  });

  test('valid input passes, with defaults applied', () => {
    const r = validateInput(readFile, { path: 'a.ts' });
    expect(r).toEqual({ ok: true, value: { path: 'a.ts', encoding: 'utf8' } });
  });

  test('schema-invalid input gives a readable message with paths and no argument values', () => {
    const r = validateInput(editFile, { path: 'SECRET-PATH', edits: [{ old: 'SECRET-VALUE', new: 42 }], mode: 'append' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.message).toMatch(/^Invalid input for tool edit_file: /);
    expect(r.message).toContain('edits[0].new');
    expect(r.message).toContain('mode');
    expect(r.message).not.toContain('SECRET');
    expect(r.message).not.toContain('append');
  });

  test('missing required field and non-object input', () => {
    const missing = validateInput(readFile, {});
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.message).toContain('path');
    for (const bad of [null, [], 'x', 42, undefined]) {
      const r = validateInput(readFile, bad);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.message).toContain('must be a JSON object');
    }
  });

  test('caps the number of reported issues', () => {
    const many = defineTool({
      name: 'many',
      kind: 'other',
      input: z.object({ a: z.string(), b: z.string(), c: z.string(), d: z.string(), e: z.string(), f: z.string(), g: z.string() }),
      run: () => '',
    });
    const r = validateInput(many, {});
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain('(and 2 more)');
  });

  test('needsApproval: boolean, predicate, throwing predicate fails closed', () => {
    expect(needsApproval(readFile, { path: 'x', encoding: 'utf8' })).toBe(false);
    expect(needsApproval(editFile, { path: 'x', edits: [], mode: 'replace' })).toBe(true);
    expect(needsApproval(bash, { command: 'rm -rf x' })).toBe(true);
    expect(needsApproval(bash, { command: 'ls' })).toBe(false);
    const throwing = defineTool({
      name: 't',
      kind: 'other',
      input: z.object({}),
      needsApproval: () => {
        throw new Error('boom');
      },
      run: () => '',
    });
    expect(needsApproval(throwing, {})).toBe(true);
  });
});

describe('runTool', () => {
  const ctx = () => ({ signal: new AbortController().signal, callId: 'c1' });

  test('string and JSON results', async () => {
    await expect(runTool(readFile, { path: 'a' }, ctx())).resolves.toEqual({ ok: true, content: 'contents of a' });
    await expect(runTool(bash, { command: 'ls' }, ctx())).resolves.toEqual({ ok: true, content: '{"exitCode":0,"stdout":2}' });
  });

  test('a throw is an error result; a returned {error} is an ordinary value', async () => {
    const failing = defineTool({ name: 'f', kind: 'other', input: z.object({}), run: () => Promise.reject(new Error('disk full')) });
    await expect(runTool(failing, {}, ctx())).resolves.toEqual({ ok: false, content: 'disk full' });
    const errorShaped = defineTool({ name: 'g', kind: 'other', input: z.object({}), run: () => ({ error: 'not really' }) });
    await expect(runTool(errorShaped, {}, ctx())).resolves.toEqual({ ok: true, content: '{"error":"not really"}' });
  });

  test('unknown tool and invalid input never run', async () => {
    let ran = false;
    const t = defineTool({
      name: 'h',
      kind: 'other',
      input: z.object({ n: z.number() }),
      run: () => {
        ran = true;
        return '';
      },
    });
    await expect(runTool(undefined, {}, { ...ctx(), name: 'ghost' })).resolves.toMatchObject({ ok: false, synthetic: 'unknown_tool' });
    await expect(runTool(t, { n: 'x' }, ctx())).resolves.toMatchObject({ ok: false, synthetic: 'invalid_input' });
    expect(ran).toBe(false);
  });

  test('timeout aborts the run signal and gives a timeout result', async () => {
    let seen: AbortSignal | undefined;
    const slow = defineTool({
      name: 'slow',
      kind: 'read',
      input: z.object({}),
      timeoutMs: 20,
      run: (_i, { signal }) => {
        seen = signal;
        return new Promise<string>(() => undefined);
      },
    });
    const r = await runTool(slow, {}, ctx());
    expect(r).toMatchObject({ ok: false, synthetic: 'timeout' });
    expect(seen?.aborted).toBe(true);
  });

  test('caller abort interrupts even a tool that ignores its signal', async () => {
    const ac = new AbortController();
    const stubborn = defineTool({ name: 's', kind: 'read', input: z.object({}), run: () => new Promise<string>(() => undefined) });
    const p = runTool(stubborn, {}, { signal: ac.signal, callId: 'c' });
    ac.abort();
    await expect(p).resolves.toMatchObject({ ok: false, synthetic: 'interrupted' });
    const pre = new AbortController();
    pre.abort();
    await expect(runTool(readFile, { path: 'a' }, { signal: pre.signal, callId: 'c' })).resolves.toMatchObject({ synthetic: 'interrupted' });
  });

  test('formatToolOutput', () => {
    expect(formatToolOutput('x')).toBe('x');
    expect(formatToolOutput(undefined)).toBe('');
    expect(formatToolOutput({ a: [1] })).toBe('{"a":[1]}');
    expect(formatToolOutput(null)).toBe('null');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => formatToolOutput(cyclic)).toThrow(/JSON-serialisable/);
  });
});

describe('provider tool specs', () => {
  test('Anthropic: name, description, input_schema with properties and required', () => {
    const specs = toAnthropicTools(tools);
    expect(specs.map((s) => s.name)).toEqual(['read_file', 'bash', 'edit_file']);
    const rf = specs[0];
    expect(rf.description).toBe('Read a file');
    expect(rf.input_schema.type).toBe('object');
    expect(rf.input_schema.required).toEqual(['path']);
    const props = rf.input_schema.properties as Record<string, JsonSchema>;
    expect(props.path).toEqual({ type: 'string', description: 'File path' });
    expect(props.offset.type).toBe('integer');
    expect(props.encoding.enum).toEqual(['utf8', 'base64']);
    expect('description' in specs[1]).toBe(false);
  });

  test('OpenAI chat: type function with function.parameters', () => {
    const specs = toOpenAIChatTools(tools);
    expect(specs[1]).toMatchObject({ type: 'function', function: { name: 'bash' } });
    expect(specs[1].function.parameters.required).toEqual(['command']);
    expect((specs[2].function.parameters.properties as Record<string, JsonSchema>).edits.type).toBe('array');
  });

  test('OpenAI Responses: flat function tools with explicit strict false', () => {
    const specs = toOpenAIResponsesTools(tools);
    expect(specs[0]).toMatchObject({ type: 'function', name: 'read_file', description: 'Read a file', strict: false });
    expect(specs[0].parameters.type).toBe('object');
  });

  test('Gemini: functionDeclarations with the OpenAPI subset', () => {
    const [tool] = toGeminiTools(tools);
    expect(tool.functionDeclarations.map((d) => d.name)).toEqual(['read_file', 'bash', 'edit_file']);
    const all = JSON.stringify(tool);
    expect(all).not.toContain('$schema');
    expect(all).not.toContain('additionalProperties');
    const bashParams = tool.functionDeclarations[1].parameters as JsonSchema;
    const timeout = (bashParams.properties as Record<string, JsonSchema>).timeout;
    expect(timeout).toEqual({ type: 'number', nullable: true });
    const edit = tool.functionDeclarations[2].parameters as JsonSchema;
    const mode = (edit.properties as Record<string, JsonSchema>).mode;
    expect(mode).toEqual({ type: 'string', enum: ['replace'] });
    const edits = (edit.properties as Record<string, JsonSchema>).edits;
    expect((edits.items as JsonSchema).required).toEqual(['old', 'new']);
    expect(edits.minItems).toBe(1);
  });

  test('Gemini jsonSchema mode passes the JSON schema through', () => {
    const [tool] = toGeminiTools([readFile], { jsonSchema: true });
    expect(tool.functionDeclarations[0].parametersJsonSchema).toBe(readFile.parameters);
    expect(tool.functionDeclarations[0].parameters).toBeUndefined();
  });

  test('toGeminiSchema handles odd input and strips unsupported keywords', () => {
    expect(toGeminiSchema(null)).toEqual({});
    expect(toGeminiSchema({ type: ['string', 'null'], exclusiveMinimum: 1, $ref: '#/x' })).toEqual({ type: 'string', nullable: true });
    expect(toGeminiSchema({ type: 'integer', enum: [1, 2] })).toEqual({ type: 'integer' });
    expect(toGeminiSchema({ type: 'string', format: 'uri' })).toEqual({ type: 'string' });
    expect(toGeminiSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'ghost'], additionalProperties: false })).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Standard Schema validators (issue 10): zod 4, zod 3 (`zod/v3`), valibot, any vendor.

import { z as z3 } from 'zod/v3';
import * as v from 'valibot';
import { classifyCall, isSafeCall } from '../../src/execute/safety';
import type { StandardSchemaV1 } from '../../src/execute/standardSchema';

const signal = new AbortController().signal;
const PATH_SCHEMA: JsonSchema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };

describe('defineTool with Standard Schema validators', () => {
  test('zod 4: JSON Schema from its own converter; validation and transforms run before run()', async () => {
    const t = defineTool({
      name: 'read4',
      kind: 'read',
      input: z.object({ path: z.string().min(1), lines: z.number().int().default(10) }),
      run: ({ path, lines }) => `${path}:${lines}`,
    });
    expect(t.parameters).toEqual({
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 }, lines: { type: 'integer', default: 10, minimum: expect.any(Number), maximum: expect.any(Number) } },
      required: ['path'],
    });
    expect(await runTool(t, { path: 'a.ts' }, { signal, callId: 'c1' })).toEqual({ ok: true, content: 'a.ts:10' });
    const bad = await runTool(t, { path: '' }, { signal, callId: 'c2' });
    expect(bad).toMatchObject({ ok: false, synthetic: 'invalid_input' });
    expect(bad.content).toMatch(/^Invalid input for tool read4: path: /);
  });

  test('zod 3 (zod/v3): validates; JSON Schema must be given, and the error without it names the fix', async () => {
    const schema = z3.object({ path: z3.string(), n: z3.number().optional() });
    expect(() => defineTool({ name: 'read3', kind: 'read', input: schema, run: () => '' })).toThrow(
      /tool read3: this zod schema has no JSON Schema converter; pass jsonSchema/,
    );
    const t = defineTool({ name: 'read3', kind: 'read', input: schema, jsonSchema: PATH_SCHEMA, run: ({ path, n }) => `${path}/${n ?? '-'}` });
    expect(t.parameters).toBe(PATH_SCHEMA);
    expect(toAnthropicTools([t])[0]!.input_schema).toEqual(PATH_SCHEMA);
    expect(await runTool(t, { path: 'x', n: 2 }, { signal, callId: 'c' })).toEqual({ ok: true, content: 'x/2' });
    const bad = await runTool(t, { path: 987654 }, { signal, callId: 'c' });
    expect(bad).toMatchObject({ ok: false, synthetic: 'invalid_input' });
    expect(bad.content).toMatch(/^Invalid input for tool read3: path: /);
    expect(bad.content).not.toContain('987654'); // never echoes argument values
  });

  test('valibot: validates with its issue paths; JSON Schema from jsonSchema', async () => {
    const schema = v.object({ path: v.string(), depth: v.optional(v.pipe(v.number(), v.integer())) });
    expect(() => defineTool({ name: 'tree', kind: 'read', input: schema, run: () => '' })).toThrow(/valibot schema has no JSON Schema converter; pass jsonSchema/);
    const t = defineTool({ name: 'tree', kind: 'read', input: schema, jsonSchema: PATH_SCHEMA, run: ({ path, depth }) => `${path}@${depth ?? 0}` });
    expect(await runTool(t, { path: 'src', depth: 2 }, { signal, callId: 'c' })).toEqual({ ok: true, content: 'src@2' });
    const bad = await runTool(t, { path: 'src', depth: 1.5 }, { signal, callId: 'c' });
    expect(bad).toMatchObject({ ok: false, synthetic: 'invalid_input' });
    expect(bad.content).toMatch(/^Invalid input for tool tree: depth: /);
    expect(validateInput(t, { depth: 1 })).toMatchObject({ ok: false, message: expect.stringMatching(/path: /) });
  });

  test('any vendor: a Standard Schema with its own JSON Schema converter (as arktype has) is used as is', async () => {
    const seen: string[] = [];
    const custom: StandardSchemaV1<{ q: string }, { q: string }> & { '~standard': { jsonSchema: unknown } } = {
      '~standard': {
        version: 1,
        vendor: 'custom',
        validate: (value) =>
          typeof (value as { q?: unknown }).q === 'string' ? { value: value as { q: string } } : { issues: [{ message: 'q must be a string', path: [{ key: 'q' }] }] },
        jsonSchema: {
          input: (o: { target: string }) => {
            seen.push(o.target);
            return { $schema: 'x', type: 'object', properties: { q: { type: 'string' } } };
          },
        },
      },
    };
    const t = defineTool({ name: 'search', kind: 'search', input: custom, run: ({ q }) => q.toUpperCase() });
    expect(seen).toEqual(['draft-2020-12']);
    expect(t.parameters).toEqual({ type: 'object', properties: { q: { type: 'string' } } });
    expect(await runTool(t, { q: 'ab' }, { signal, callId: 'c' })).toEqual({ ok: true, content: 'AB' });
    expect((await runTool(t, { q: 1 }, { signal, callId: 'c' })).content).toBe('Invalid input for tool search: q: q must be a string');
  });

  test('anything that is not a validator gets a one-line error that names the fix', () => {
    const def = (input: unknown) => () => defineTool({ name: 'x', kind: 'read', input: input as never, run: () => '' });
    expect(def(PATH_SCHEMA)).toThrow(
      'defineTool: tool x: input must be a Standard Schema validator (zod 4, zod 3.24+, valibot, arktype, …), got object (a plain JSON Schema object goes in jsonSchema, with a validator in input)',
    );
    expect(def(undefined)).toThrow(/input must be a Standard Schema validator .*got undefined$/);
    expect(def({ _def: {}, safeParse: () => ({}) })).toThrow(/zod < 3\.24\); upgrade zod to 3\.24\+ or 4/);
    expect(def(z.object({}))).not.toThrow();
    expect(() => defineTool({ name: 'x', kind: 'read', input: z.object({}), jsonSchema: [] as never, run: () => '' })).toThrow(/jsonSchema must be a JSON Schema object/);
    for (const f of [def(PATH_SCHEMA), def(null)]) {
      try {
        f();
      } catch (err) {
        expect((err as Error).message).not.toContain('\n');
      }
    }
  });

  test('an asynchronous validator: runTool awaits it; classification is fail-closed', async () => {
    const asyncSchema: StandardSchemaV1<{ path: string }, { path: string }> = {
      '~standard': {
        version: 1,
        vendor: 'async',
        validate: async (value) => (typeof (value as { path?: unknown }).path === 'string' ? { value: value as { path: string } } : { issues: [{ message: 'bad', path: ['path'] }] }),
      },
    };
    const t = defineTool({ name: 'slow', kind: 'read', input: asyncSchema, jsonSchema: PATH_SCHEMA, needsApproval: (i) => i.path === 'secret', run: ({ path }) => path });
    expect(await runTool(t, { path: 'p' }, { signal, callId: 'c' })).toEqual({ ok: true, content: 'p' });
    expect(await runTool(t, { path: 1 }, { signal, callId: 'c' })).toMatchObject({ ok: false, synthetic: 'invalid_input' });
    expect(validateInput(t, { path: 'p' })).toMatchObject({ ok: false, message: expect.stringMatching(/asynchronously; use validateInputAsync/) });
    expect(classifyCall(createToolRegistry([t]), 'slow', { path: 'p' })).toEqual({ safe: true, needsApproval: true });
  });
});

describe('isConcurrencySafe(input)', () => {
  const shell = defineTool({
    name: 'shell',
    kind: 'execute',
    input: z.object({ cmd: z.string() }),
    isConcurrencySafe: ({ cmd }) => cmd === 'ls' || cmd.startsWith('cat '),
    run: () => 'ok',
  });
  const edit = defineTool({ name: 'note', kind: 'edit', input: z.object({ text: z.string() }), isConcurrencySafe: () => true, run: () => 'ok' });
  const throwing = defineTool({
    name: 'odd',
    kind: 'read',
    input: z.object({}),
    isConcurrencySafe: () => {
      throw new Error('boom');
    },
    run: () => 'ok',
  });
  const registry = createToolRegistry([shell, edit, throwing]);

  test('decides instead of the kind rules, over the validated input; a throw counts as unsafe', () => {
    expect(classifyCall(registry, 'shell', { cmd: 'ls' }).safe).toBe(true);
    expect(classifyCall(registry, 'shell', { cmd: 'rm -rf build' }).safe).toBe(false);
    expect(classifyCall(registry, 'note', { text: 'x' }).safe).toBe(true); // an 'edit' tool that says it is safe
    expect(classifyCall(registry, 'odd', {}).safe).toBe(false); // 'read', but its predicate threw
    expect(isSafeCall(shell, { cmd: 'cat a.txt' })).toBe(true);
  });

  test('a non-function is a definition error', () => {
    expect(() => defineTool({ name: 'y', kind: 'read', input: z.object({}), isConcurrencySafe: true as never, run: () => '' })).toThrow(
      /isConcurrencySafe must be a function/,
    );
  });
});
