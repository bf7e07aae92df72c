/**
 * A tiny stdio MCP server for the opt-in Codex test (test/gateway/codex.test.ts): one tool,
 * `lookup_word({ key })`, that answers from a fixed table. Run by Codex as
 * `node test/gateway/codex-mcp-server.cjs` (offline; only @modelcontextprotocol/sdk and zod).
 */
/* global require, process */
/* eslint-disable @typescript-eslint/no-require-imports -- a plain CommonJS script that Codex runs with node */
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const WORDS = { secret: 'albatross', other: 'heron' };
const server = new McpServer({ name: 'wordbook', version: '1.0.0' });
server.registerTool(
  'lookup_word',
  // read-only: Codex runs it without asking for approval (`codex exec` cannot ask)
  { description: 'Look up the word stored under a key in the word book.', inputSchema: { key: z.string() }, annotations: { readOnlyHint: true } },
  async ({ key }) => ({ content: [{ type: 'text', text: `the word for ${key} is ${WORDS[key] ?? 'unknown'}` }] }),
);
server.connect(new StdioServerTransport()).catch((err) => {
  process.stderr.write(`wordbook MCP server failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
