/**
 * Outputs of the batch A families (issue 12) as their publishers show them, each with its source.
 * Where the source gives the layout but not a verbatim model output, the note says which part is
 * ours. Used by familiesA.test.ts: each entry parses to the calls listed, at every byte split.
 */
import type { ParserOptions } from '../../src/parsers';

export interface CorpusCall {
  name: string;
  args: Record<string, unknown>;
}

export interface CorpusEntry {
  family: string;
  source: string;
  input: string;
  calls: CorpusCall[];
  /** Text and thinking after trimming surrounding whitespace (omitted: must be empty). */
  text?: string;
  thinking?: string;
  opts?: ParserOptions;
}

const searchWebTool = {
  name: 'search_web',
  description: 'Search function.',
  parameters: {
    type: 'object',
    properties: {
      query_list: { type: 'array', items: { type: 'string' } },
      query_tag: { type: 'array', items: { type: 'string' } },
    },
    required: ['query_list', 'query_tag'],
  },
};

export const CORPUS_A: CorpusEntry[] = [
  {
    family: 'minimax-m2',
    source: 'MiniMax-AI/MiniMax-M2.5 docs/tool_calling_guide.md, "Model Output Format" (verbatim)',
    opts: { tools: [searchWebTool] },
    input:
      '<minimax:tool_call>\n<invoke name="search_web">\n<parameter name="query_tag">["technology", "events"]</parameter>\n' +
      '<parameter name="query_list">["\\"OpenAI\\" \\"latest\\" \\"release\\""]</parameter>\n</invoke>\n' +
      '<invoke name="search_web">\n<parameter name="query_tag">["technology", "events"]</parameter>\n' +
      '<parameter name="query_list">["\\"Gemini\\" \\"latest\\" \\"release\\""]</parameter>\n</invoke>\n</minimax:tool_call>',
    calls: [
      {
        name: 'search_web',
        args: { query_tag: ['technology', 'events'], query_list: ['"OpenAI" "latest" "release"'] },
      },
      {
        name: 'search_web',
        args: { query_tag: ['technology', 'events'], query_list: ['"Gemini" "latest" "release"'] },
      },
    ],
  },
  {
    family: 'minimax-m2',
    source: 'MiniMax-AI/MiniMax-M2.5 docs/tool_calling_guide.md, parse_tool_calls usage example (verbatim)',
    input:
      'Let me help you query the weather.\n<minimax:tool_call>\n<invoke name="get_weather">\n' +
      '<parameter name="location">San Francisco</parameter>\n<parameter name="unit">celsius</parameter>\n' +
      '</invoke>\n</minimax:tool_call>',
    text: 'Let me help you query the weather.',
    calls: [{ name: 'get_weather', args: { location: 'San Francisco', unit: 'celsius' } }],
  },
  {
    family: 'hunyuan',
    source: 'Tencent Hunyuan-A13B agent/README.md, "模型输出结果如下" (verbatim, "..." is in the source)',
    input:
      '<think>\n...\n</think>\n<answer>\n<tool_calls>[{"name": "get_weather", "arguments": {"city": "Shenzhen"}}]</tool_calls>\n</answer>',
    thinking: '...',
    calls: [{ name: 'get_weather', args: { city: 'Shenzhen' } }],
  },
  {
    family: 'hunyuan',
    source:
      'Tencent Hunyuan-A13B agent/README.md, slow-thinking training sample, assistant content (verbatim)',
    input:
      '<think>\nOK, the user asked about the weather in Beijing and Shanghai,...\n</think>\n<answer><tool_calls>[{"name": "get_weather", "arguments": {"city": "Beijing"}}, {"name": "get_weather", "arguments": {"city": "Shanghai"}}]</tool_calls></answer>',
    thinking: 'OK, the user asked about the weather in Beijing and Shanghai,...',
    calls: [
      { name: 'get_weather', args: { city: 'Beijing' } },
      { name: 'get_weather', args: { city: 'Shanghai' } },
    ],
  },
  {
    family: 'ernie45',
    source:
      'vllm-project/vllm PR #25027 (ERNIE-4.5-21B-A3B-Thinking), "toolcall format: abc\\n</think>\\n\\n\\n<tool_call>\\nxyz\\n</tool_call>\\n"; the call JSON (xyz) is ours, for the PR\'s get_current_temperature tool',
    opts: { startInReasoning: true },
    input:
      'The user wants the temperature in Beijing.\n</think>\n\n\n<tool_call>\n{"name": "get_current_temperature", "arguments": {"location": "Beijing"}}\n</tool_call>\n',
    thinking: 'The user wants the temperature in Beijing.',
    calls: [{ name: 'get_current_temperature', args: { location: 'Beijing' } }],
  },
  {
    family: 'ernie45',
    source:
      'vllm-project/vllm PR #25027, "reasoning format: abc\\n</think>\\n\\n\\n<response>\\ndef\\n</response>\\n" (verbatim)',
    opts: { startInReasoning: true },
    input: 'abc\n</think>\n\n\n<response>\ndef\n</response>\n',
    thinking: 'abc',
    text: 'def',
    calls: [],
  },
  {
    family: 'granite',
    source:
      'Granite 4.0 chat template (ibm-granite, as shipped by LM Studio / Ollama): "your tool call SHOULD look like this" example (verbatim)',
    input: '<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Boston"}}\n</tool_call>',
    calls: [{ name: 'get_current_weather', args: { city: 'Boston' } }],
  },
  {
    family: 'granite',
    source:
      'llama.cpp Granite 3.x handler comment, "Format: <|tool_call|>[{"name": "func", "arguments": {...}}]"; arguments ours; key order as Granite 3 writes it (arguments first)',
    input:
      '<|tool_call|>[{"arguments": {"location": "Boston, MA"}, "name": "get_current_weather"}]<|end_of_text|>',
    calls: [{ name: 'get_current_weather', args: { location: 'Boston, MA' } }],
  },
  {
    family: 'seed-oss',
    source:
      'Seed-OSS-36B-Instruct chat_template.jinja as quoted by node-llama-cpp SeedChatWrapper: call prefix "<seed:tool_call>\\n<function=", suffix "\\n</function>\\n</seed:tool_call>\\n"; parameters ours',
    input:
      '<seed:think>Need the weather.</seed:think>Checking.\n<seed:tool_call>\n<function=get_weather>\n<parameter=location>Paris</parameter>\n<parameter=days>2</parameter>\n</function>\n</seed:tool_call>\n<seed:eos>',
    thinking: 'Need the weather.',
    text: 'Checking.',
    calls: [{ name: 'get_weather', args: { location: 'Paris', days: 2 } }],
  },
  {
    family: 'longcat',
    source:
      'LongCat-Flash-Chat tool format (vLLM longcat parser tags <longcat_tool_call>…</longcat_tool_call>, Hermes JSON body); content ours',
    input:
      '<longcat_tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</longcat_tool_call>',
    calls: [{ name: 'get_weather', args: { city: 'Beijing' } }],
  },
  {
    family: 'xlam',
    source:
      'xLAM-2 model card (Salesforce/xLAM-2-*-fc-r): output is a JSON list of {"name", "arguments"}; content ours',
    input:
      '[{"name": "get_weather", "arguments": {"location": "San Francisco, CA", "unit": "celsius"}}, {"name": "get_weather", "arguments": {"location": "New York, NY"}}]',
    calls: [
      { name: 'get_weather', args: { location: 'San Francisco, CA', unit: 'celsius' } },
      { name: 'get_weather', args: { location: 'New York, NY' } },
    ],
  },
  {
    family: 'pythonic',
    source:
      'Llama 3.2 model card / prompt format ("[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]"); values ours',
    input:
      '[get_weather(city="San Francisco", metric="celsius"), get_time(timezone=\'PST\', verbose=False)]<|eot_id|>',
    calls: [
      { name: 'get_weather', args: { city: 'San Francisco', metric: 'celsius' } },
      { name: 'get_time', args: { timezone: 'PST', verbose: false } },
    ],
  },
  {
    family: 'llama4',
    source: 'Llama 4 prompt format: the call list between <|python_start|> and <|python_end|>; values ours',
    input:
      "Let me check.<|python_start|>[search(query=\"llama 4\", filters={'year': 2025, 'tags': ('ai', 'meta')}, limit=None)]<|python_end|><|eom|>",
    text: 'Let me check.',
    calls: [
      {
        name: 'search',
        args: { query: 'llama 4', filters: { year: 2025, tags: ['ai', 'meta'] }, limit: null },
      },
    ],
  },
];
