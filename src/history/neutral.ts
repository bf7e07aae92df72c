/**
 * Is this the neutral history shape (src/history/types.ts)? `runTurn({ history })` asks before the
 * stream opens: a provider-shaped message (OpenAI chat `tool_calls`, Anthropic content blocks,
 * Responses items, Gemini `parts`, AI SDK parts) gets one line naming the message, the field and
 * the converter that reads that shape (`fromOpenAIChatMessages`, … in src/history/shapes.ts).
 */

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Which provider shape a message that is not neutral looks like, and its converter. */
function providerShape(m: Obj): string | undefined {
  const blocks = Array.isArray(m.content) ? m.content.filter(isObj) : [];
  const blockTypes = new Set(blocks.map((b) => b.type));
  if (Array.isArray(m.parts) || m.role === 'model') return 'a Gemini content (convert with fromGeminiContents)';
  if (typeof m.type === 'string' && /^(function_call|function_call_output|message|reasoning)$/.test(m.type))
    return 'an OpenAI Responses input item (convert with fromOpenAIResponsesInput)';
  if (m.role === 'developer') return 'an OpenAI Responses input item (convert with fromOpenAIResponsesInput)';
  if (blockTypes.has('tool-call') || blockTypes.has('tool-result')) return 'an AI SDK message (convert with fromAiSdkMessages)';
  if (blockTypes.has('tool_use') || blockTypes.has('tool_result') || blockTypes.has('thinking'))
    return 'an Anthropic message (convert with fromAnthropicMessages)';
  if ('tool_calls' in m || 'tool_call_id' in m || m.role === 'system' || m.role === 'function')
    return 'an OpenAI chat message (convert with fromOpenAIChatMessages)';
  if (blockTypes.has('text') || blockTypes.has('image') || blockTypes.has('image_url'))
    return 'a provider message with content blocks (convert with fromAnthropicMessages, fromOpenAIChatMessages or fromAiSdkMessages)';
  return undefined;
}

function describe(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string '${v.length > 40 ? `${v.slice(0, 40)}…` : v}'`;
  return typeof v === 'object' ? 'an object' : `the ${typeof v} ${String(v)}`;
}

/** What is wrong with one message, or undefined. */
function messageProblem(m: unknown, at: string): string | undefined {
  if (!isObj(m)) return `${at} must be an object with a role (got ${describe(m)})`;
  const shape = providerShape(m);
  const like = shape ? `: it looks like ${shape}` : '';
  if (m.role === 'user') {
    if (typeof m.content !== 'string') return `${at}.content must be a string (got ${describe(m.content)})${like}`;
    return undefined;
  }
  if (m.role === 'assistant') {
    if (!Array.isArray(m.calls)) return `${at}.calls must be an array of { id, name, input } (got ${describe(m.calls)})${like}`;
    if (typeof m.content !== 'string') return `${at}.content must be a string (got ${describe(m.content)})${like}`;
    for (let j = 0; j < m.calls.length; j++) {
      const c: unknown = m.calls[j];
      const cat = `${at}.calls[${j}]`;
      if (!isObj(c)) return `${cat} must be an object { id, name, input } (got ${describe(c)})`;
      if (typeof c.id !== 'string') return `${cat}.id must be a string (got ${describe(c.id)})`;
      if (typeof c.name !== 'string') return `${cat}.name must be a string (got ${describe(c.name)})`;
      if (!isObj(c.input)) return `${cat}.input must be an object (got ${describe(c.input)})`;
    }
    return undefined;
  }
  if (m.role === 'tool') {
    if (!Array.isArray(m.results)) return `${at}.results must be an array of { callId, name, ok, content } (got ${describe(m.results)})${like}`;
    for (let j = 0; j < m.results.length; j++) {
      const r: unknown = m.results[j];
      const rat = `${at}.results[${j}]`;
      if (!isObj(r)) return `${rat} must be an object { callId, name, ok, content } (got ${describe(r)})`;
      if (typeof r.callId !== 'string') return `${rat}.callId must be a string (got ${describe(r.callId)})`;
      if (typeof r.content !== 'string') return `${rat}.content must be a string (got ${describe(r.content)})`;
    }
    return undefined;
  }
  return `${at}.role must be 'user', 'assistant' or 'tool' (got ${describe(m.role)})${like}`;
}

/**
 * The first way `history` is not neutral history, as one phrase naming the message and field
 * (`history[1].calls must be an array … : it looks like an OpenAI chat message (convert with
 * fromOpenAIChatMessages)`), or undefined when every message is neutral.
 */
export function neutralHistoryProblem(history: unknown, name = 'history'): string | undefined {
  if (!Array.isArray(history)) return `${name} must be an array of messages (got ${describe(history)})`;
  for (let i = 0; i < history.length; i++) {
    const p = messageProblem(history[i], `${name}[${i}]`);
    if (p) return p;
  }
  return undefined;
}
