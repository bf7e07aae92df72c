import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { mcpResultText, toolsFromMcp } from '../../src/execute/mcp';
import { isSafeCall } from '../../src/execute/safety';
import { runTool, toAnthropicTools, validateInput } from '../../src/execute/tools';

async function connectedPair(): Promise<{ client: Client; close: () => Promise<void> }> {
  const server = new McpServer({ name: 'test-server', version: '1.0.0' });
  server.registerTool(
    'read_note',
    { description: 'Read a note', inputSchema: { id: z.string(), verbose: z.boolean().optional() }, annotations: { readOnlyHint: true } },
    async ({ id }) => ({ content: [{ type: 'text', text: `note ${id}` }] }),
  );
  server.registerTool(
    'delete.note',
    { description: 'Delete a note', inputSchema: { id: z.string() }, annotations: { readOnlyHint: false, destructiveHint: true } },
    async ({ id }) => ({ content: [{ type: 'text', text: `cannot delete ${id}` }], isError: true }),
  );
  server.registerTool('stats', { description: 'Stats' }, async () => ({ content: [], structuredContent: { count: 3 } }));
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'sluice-test', version: '1.0.0' });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return {
    client,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

describe('toolsFromMcp with a real in-memory MCP server', () => {
  let pair: Awaited<ReturnType<typeof connectedPair>>;
  beforeAll(async () => {
    pair = await connectedPair();
  });
  afterAll(async () => {
    await pair.close();
  });

  const ctx = () => ({ signal: new AbortController().signal, callId: 'call_1' });

  test('kinds, names, schemas; run goes through the client', async () => {
    const listing = await pair.client.listTools();
    const calls: string[] = [];
    const tools = toolsFromMcp(listing, (name, args, { signal }) => {
      calls.push(name);
      return pair.client.callTool({ name, arguments: args }, undefined, { signal });
    });
    const byMcp = new Map(tools.map((t) => [t.mcpName, t]));
    const read = byMcp.get('read_note')!;
    const del = byMcp.get('delete.note')!;
    const stats = byMcp.get('stats')!;
    expect(read.kind).toBe('read');
    expect(del.kind).toBe('other');
    expect(stats.kind).toBe('other');
    expect(del.name).toBe('delete_note'); // '.' is not a valid provider tool name character
    expect(isSafeCall(read, { id: 'a' })).toBe(true);
    expect(isSafeCall(del, { id: 'a' })).toBe(false);

    // the server's JSON schema is passed through to provider specs
    const spec = toAnthropicTools([read])[0];
    expect(spec.input_schema.required).toEqual(['id']);
    expect(Object.keys(spec.input_schema.properties as object)).toEqual(['id', 'verbose']);

    await expect(runTool(read, { id: 'n1' }, ctx())).resolves.toEqual({ ok: true, content: 'note n1' });
    await expect(runTool(del, { id: 'n1' }, ctx())).resolves.toEqual({ ok: false, content: 'cannot delete n1' });
    await expect(runTool(stats, {}, ctx())).resolves.toEqual({ ok: true, content: '{"count":3}' });
    expect(calls).toEqual(['read_note', 'delete.note', 'stats']);
  });

  test('permissive validation: required keys and simple top-level types', async () => {
    const listing = await pair.client.listTools();
    const read = toolsFromMcp(listing, () => '').find((t) => t.mcpName === 'read_note')!;
    expect(validateInput(read, { id: 'x' }).ok).toBe(true);
    expect(validateInput(read, { id: 'x', extra: [1] }).ok).toBe(true);
    const missing = validateInput(read, {});
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.message).toContain('id');
    expect(validateInput(read, { id: 5 }).ok).toBe(false);
    expect(validateInput(read, { id: 'x', verbose: 'yes' }).ok).toBe(false);
    expect(validateInput(read, 'x').ok).toBe(false);
  });
});

describe('toolsFromMcp on hand-written listings', () => {
  test('skips malformed entries, de-duplicates names, applies prefix and approval', () => {
    const tools = toolsFromMcp(
      { tools: [null, { name: '' }, { name: 'a/b', inputSchema: { type: 'object' } }, { name: 'a.b' }, { name: 'x', inputSchema: 'junk' }] },
      () => '',
      { prefix: 'srv_', needsApproval: (name) => name === 'x' },
    );
    expect(tools.map((t) => t.name)).toEqual(['srv_a_b', 'srv_a_b_2', 'srv_x']);
    expect(tools.map((t) => t.mcpName)).toEqual(['a/b', 'a.b', 'x']);
    expect(tools[2].parameters).toEqual({ type: 'object' });
    const approval = tools[2].needsApproval as (i: Record<string, unknown>) => boolean;
    expect(approval({})).toBe(true);
    expect(toolsFromMcp({} as never, () => '')).toEqual([]);
  });

  test('mcpResultText', () => {
    expect(mcpResultText('plain')).toBe('plain');
    expect(mcpResultText({ x: 1 })).toBe('{"x":1}');
    expect(mcpResultText(undefined)).toBe('');
    expect(
      mcpResultText({
        content: [
          { type: 'text', text: 'a' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'file:///x', text: 'body' } },
          { type: 'resource_link', uri: 'file:///y', name: 'y' },
        ],
      }),
    ).toBe('a\n[image: image/png, 3 bytes]\nbody\n[resource: file:///y]');
    expect(() => mcpResultText({ content: [], isError: true })).toThrow('MCP tool reported an error');
  });
});
