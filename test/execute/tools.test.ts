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
