/**
 * One synthetic stream per family (and per layout where a family has several): reasoning, text,
 * two calls (the first with non-ASCII characters and characters that need JSON escaping), and
 * text after the calls. `expected` is the merged event sequence; `closeAt[i]` is a substring whose
 * end (searched in order through the stream) is where call i's completion evidence must appear.
 */
import type { StreamEvent } from '../../src/wire/events';
import type { ParserOptions } from '../../src/parsers';

export const R = 'Plan: read the doc, then check 東京 weather 🤔 <b>ok</b> & done.';
export const T1 = 'Sure — checking 東京 for you.\n\n';
export const T2 = '\nDone ✅ <i>see</i>';
/** A note with a quote, a backslash, a newline, a tab, an em dash and an emoji. */
export const NOTE = 'say "hi" \\ done\nnext\tline — 🚀';
export const A0 = { path: 'docs/日本語.md', note: NOTE };
export const A1 = { city: 'Tokyo', days: 3 };
export const ARGS0 = JSON.stringify(A0);
export const ARGS1 = JSON.stringify(A1);

export interface FamilyCase {
  title: string;
  family: string;
  opts?: ParserOptions;
  stream: string;
  expected: StreamEvent[];
  closeAt: string[];
  /** Marker strings that must never appear in text or thinking. */
  markers: string[];
}

interface Shape {
  thinking?: string;
  text1?: string;
  /** `lateId`: the name comes first and the id (the model's, else call_<index>) right before the completion (Mistral's array layout). */
  calls: { id?: string; name: string; args: string; lateId?: boolean }[];
  text2?: string;
}

export function events(s: Shape): StreamEvent[] {
  const out: StreamEvent[] = [];
  if (s.thinking) out.push({ type: 'thinking.delta', text: s.thinking });
  if (s.text1) out.push({ type: 'text.delta', text: s.text1 });
  s.calls.forEach((c, index) => {
    if (c.lateId) {
      out.push({ type: 'call.identity', index, name: c.name });
      out.push({ type: 'call.fragment', index, text: c.args });
      out.push({ type: 'call.identity', index, id: c.id ?? `call_${index}` });
    } else {
      out.push({ type: 'call.identity', index, id: c.id ?? `call_${index}`, name: c.name });
      out.push({ type: 'call.fragment', index, text: c.args });
    }
    out.push({ type: 'call.complete', index });
  });
  if (s.text2) out.push({ type: 'text.delta', text: s.text2 });
  return out;
}

const std = (over: Partial<Shape> = {}): StreamEvent[] =>
  events({
    thinking: R,
    text1: T1,
    calls: [
      { name: 'read_file', args: ARGS0 },
      { name: 'get_weather', args: ARGS1 },
    ],
    text2: T2,
    ...over,
  });

const THINK = ['<think>', '</think>'];
const DS = [
  '<｜tool▁calls▁begin｜>',
  '<｜tool▁call▁begin｜>',
  '<｜tool▁sep｜>',
  '<｜tool▁call▁end｜>',
  '<｜tool▁calls▁end｜>',
  '｜',
  '▁',
];

export const CASES: FamilyCase[] = [
  {
    title: 'hermes',
    family: 'hermes',
    stream:
      `<think>${R}</think>${T1}<tool_call>\n{"name": "read_file", "arguments": ${ARGS0}}\n</tool_call>\n` +
      `<tool_call>\n{"name": "get_weather", "arguments": ${ARGS1}}\n</tool_call>${T2}`,
    expected: std(),
    closeAt: ['</tool_call>', '</tool_call>'],
    markers: [...THINK, '<tool_call', '</tool_call'],
  },
  {
    title: 'qwen3-coder',
    family: 'qwen3-coder',
    stream:
      `<think>${R}</think>${T1}<tool_call>\n<function=read_file>\n<parameter=path>\ndocs/日本語.md\n</parameter>\n` +
      `<parameter=note>\n${NOTE}\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n` +
      `<parameter=city>\nTokyo\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>${T2}`,
    expected: std(),
    closeAt: ['</function>', '</function>'],
    markers: [...THINK, '<tool_call', '</tool_call', '<function', '</function', '<parameter', '</parameter'],
  },
  {
    title: 'deepseek-v3',
    family: 'deepseek-v3',
    stream:
      `<think>${R}</think>${T1}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n` +
      '```json\n' +
      ARGS0 +
      '\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n' +
      '```json\n' +
      ARGS1 +
      `\n\`\`\`<｜tool▁call▁end｜><｜tool▁calls▁end｜>${T2}`,
    expected: std(),
    closeAt: ['<｜tool▁call▁end｜>', '<｜tool▁call▁end｜>'],
    markers: [...THINK, ...DS, '```'],
  },
  {
    title: 'deepseek-v3.1',
    family: 'deepseek-v3.1',
    stream:
      `<think>${R}</think>${T1}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>${ARGS0}<｜tool▁call▁end｜>` +
      `<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>${ARGS1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>${T2}`,
    expected: std(),
    closeAt: ['<｜tool▁call▁end｜>', '<｜tool▁call▁end｜>'],
    markers: [...THINK, ...DS],
  },
  {
    title: 'deepseek-v4 (DSML)',
    family: 'deepseek-v4',
    stream:
      `<think>${R}</think>${T1}<｜DSML｜tool_calls>\n<｜DSML｜invoke name="read_file">\n` +
      `<｜DSML｜parameter name="path" string="true">docs/日本語.md</｜DSML｜parameter>\n` +
      `<｜DSML｜parameter name="note" string="true">${NOTE}</｜DSML｜parameter>\n</｜DSML｜invoke>\n` +
      `<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Tokyo</｜DSML｜parameter>\n` +
      `<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>${T2}`,
    expected: std(),
    closeAt: ['</｜DSML｜invoke>', '</｜DSML｜invoke>'],
    markers: [...THINK, '｜', 'DSML'],
  },
  {
    title: 'deepseek-v3.2 (DSML function_calls)',
    family: 'deepseek-v3.2',
    stream:
      `<think>${R}</think>${T1}<｜DSML｜function_calls>\n<｜DSML｜invoke name="read_file">\n{"path": "docs/日本語.md", "note": ${JSON.stringify(NOTE)}}\n</｜DSML｜invoke>\n` +
      `<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Tokyo</｜DSML｜parameter>\n` +
      `<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>${T2}`,
    expected: std({
      calls: [
        { name: 'read_file', args: `{"path": "docs/日本語.md", "note": ${JSON.stringify(NOTE)}}\n` },
        { name: 'get_weather', args: ARGS1 },
      ],
    }),
    closeAt: ['</｜DSML｜invoke>', '</｜DSML｜invoke>'],
    markers: [...THINK, '｜', 'DSML'],
  },
  {
    title: 'kimi-k2',
    family: 'kimi-k2',
    stream:
      `<think>${R}</think>${T1}<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>${ARGS0}<|tool_call_end|>` +
      `<|tool_call_begin|>functions.get_weather:1<|tool_call_argument_begin|>${ARGS1}<|tool_call_end|><|tool_calls_section_end|>${T2}`,
    expected: std({
      calls: [
        { id: 'functions.read_file:0', name: 'read_file', args: ARGS0 },
        { id: 'functions.get_weather:1', name: 'get_weather', args: ARGS1 },
      ],
    }),
    closeAt: ['<|tool_call_end|>', '<|tool_call_end|>'],
    markers: [...THINK, '<|', '|>'],
  },
  {
    title: 'glm45',
    family: 'glm45',
    stream:
      `<think>${R}</think>${T1}<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>docs/日本語.md</arg_value>\n` +
      `<arg_key>note</arg_key>\n<arg_value>${NOTE}</arg_value>\n</tool_call>\n<tool_call>get_weather\n` +
      `<arg_key>city</arg_key>\n<arg_value>Tokyo</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>${T2}`,
    expected: std(),
    closeAt: ['</tool_call>', '</tool_call>'],
    markers: [...THINK, '<tool_call', '</tool_call', '<arg_', '</arg_'],
  },
  {
    title: 'glm47 (no newlines)',
    family: 'glm47',
    stream:
      `<think>${R}</think>${T1}<tool_call>read_file<arg_key>path</arg_key><arg_value>docs/日本語.md</arg_value>` +
      `<arg_key>note</arg_key><arg_value>${NOTE}</arg_value></tool_call><tool_call>get_weather` +
      `<arg_key>city</arg_key><arg_value>Tokyo</arg_value><arg_key>days</arg_key><arg_value>3</arg_value></tool_call>${T2}`,
    expected: std(),
    closeAt: ['</tool_call>', '</tool_call>'],
    markers: [...THINK, '<tool_call', '</tool_call', '<arg_', '</arg_'],
  },
  {
    title: 'gpt-oss (harmony)',
    family: 'gpt-oss',
    stream:
      `<|channel|>analysis<|message|>${R}<|end|><|start|>assistant<|channel|>commentary<|message|>${T1}<|end|>` +
      `<|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>${ARGS0}<|call|>` +
      `<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>${ARGS1}<|call|>` +
      `<|start|>assistant<|channel|>final<|message|>${T2}<|return|>`,
    expected: std(),
    closeAt: ['<|call|>', '<|call|>'],
    markers: ['<|', '|>', 'analysis', 'commentary', 'functions.'],
  },
  {
    title: 'nemotron',
    family: 'nemotron',
    stream:
      `<think>${R}</think>${T1}<TOOLCALL>[{"name": "read_file", "arguments": ${ARGS0}}, ` +
      `{"name": "get_weather", "arguments": ${ARGS1}}]</TOOLCALL>${T2}`,
    expected: std(),
    closeAt: ['🚀"}}', '"days":3}}'],
    markers: [...THINK, '<TOOLCALL', '</TOOLCALL'],
  },
  {
    title: 'mistral ([ARGS], [CALL_ID])',
    family: 'mistral',
    stream: `[THINK]${R}[/THINK]${T1}[TOOL_CALLS]read_file[ARGS]${ARGS0}[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]${ARGS1}${T2}`,
    expected: std({
      calls: [
        { name: 'read_file', args: ARGS0 },
        { id: 'a1B2c3D4e', name: 'get_weather', args: ARGS1 },
      ],
    }),
    closeAt: [ARGS0, ARGS1],
    markers: ['[THINK]', '[/THINK]', '[TOOL_CALLS]', '[ARGS]', '[CALL_ID]'],
  },
  {
    title: 'mistral (v11 name{json})',
    family: 'mistral',
    stream: `[THINK]${R}[/THINK]${T1}[TOOL_CALLS]read_file${ARGS0}[TOOL_CALLS]get_weather${ARGS1}${T2}`,
    expected: std(),
    closeAt: [ARGS0, ARGS1],
    markers: ['[THINK]', '[/THINK]', '[TOOL_CALLS]'],
  },
  {
    title: 'mistral (JSON array)',
    family: 'mistral',
    stream:
      `[THINK]${R}[/THINK]${T1}[TOOL_CALLS] [{"name": "read_file", "arguments": ${ARGS0}}, ` +
      `{"name": "get_weather", "arguments": ${ARGS1}, "id": "a1B2c3D4e"}]${T2}`,
    // The model's own id ("id" after "arguments", as the Mistral chat template writes it) is kept.
    expected: std({
      calls: [
        { name: 'read_file', args: ARGS0, lateId: true },
        { name: 'get_weather', args: ARGS1, lateId: true, id: 'a1B2c3D4e' },
      ],
    }),
    closeAt: ['🚀"}}', '"a1B2c3D4e"}'],
    markers: ['[THINK]', '[/THINK]', '[TOOL_CALLS]'],
  },
  {
    title: 'llama3 (python_tag)',
    family: 'llama3',
    stream:
      `${T1}<|python_tag|>{"name": "read_file", "parameters": ${ARGS0}}; ` +
      `{"name": "get_weather", "parameters": ${ARGS1}}<|eom_id|>${T2}`,
    expected: std({ thinking: undefined }),
    closeAt: ['🚀"}}', '"days":3}}'],
    markers: ['<|python_tag|>', '<|eom_id|>', '"parameters"'],
  },
  {
    title: 'llama3 (JSON at the start of the output)',
    family: 'llama3',
    stream: ` {"type": "function", "name": "read_file", "parameters": ${ARGS0}};{"name": "get_weather", "parameters": ${ARGS1}}${T2}`,
    expected: std({ thinking: undefined, text1: undefined }),
    closeAt: ['🚀"}}', '"days":3}}'],
    markers: ['"parameters"', '"name"'],
  },
  {
    title: 'gemma4',
    family: 'gemma4',
    stream:
      `<|channel>thought\n${R}<channel|>${T1}<|tool_call>call:read_file{path:<|"|>docs/日本語.md<|"|>,note:<|"|>${NOTE}<|"|>}<tool_call|>` +
      `<|tool_call>call:get_weather{city:<|"|>Tokyo<|"|>,days:3}<tool_call|>${T2}`,
    expected: std(),
    closeAt: ['<tool_call|>', '<tool_call|>'],
    markers: ['<|channel>', '<channel|>', 'thought\n', '<|tool_call>', '<tool_call|>', '<|"|>', 'call:'],
  },
  {
    title: 'functiongemma',
    family: 'functiongemma',
    stream:
      `${T1}<start_function_call>call:read_file{path:<escape>docs/日本語.md<escape>,note:<escape>${NOTE}<escape>}<end_function_call>` +
      `<start_function_call>call:get_weather{city:<escape>Tokyo<escape>,days:3}<end_function_call>${T2}`,
    expected: std({ thinking: undefined }),
    closeAt: ['<end_function_call>', '<end_function_call>'],
    markers: ['<start_function_call>', '<end_function_call>', '<escape>', 'call:'],
  },
];

/** UTF-16 end offsets of each call's closing substring, searched in order. */
export function closeOffsets(c: FamilyCase): number[] {
  const out: number[] = [];
  let from = 0;
  for (const m of c.closeAt) {
    const at = c.stream.indexOf(m, from);
    if (at < 0) throw new Error(`${c.title}: close substring not found: ${m}`);
    out.push(at + m.length);
    from = at + m.length;
  }
  return out;
}
