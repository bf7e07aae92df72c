/** The family registry: names, aliases and constructors. */
import { byteParser } from './bytes';
import { DeepSeekParser } from './deepseek';
import { DsmlParser, GCML } from './dsml';
import { GemmaParser } from './gemma';
import { GlmParser } from './glm';
import { HarmonyParser } from './harmony';
import { HermesParser } from './hermes';
import { KimiParser } from './kimi';
import { LlamaParser } from './llama';
import { MistralParser } from './mistral';
import { NemotronParser } from './nemotron';
import { Qwen3CoderParser } from './qwen3coder';
// Issue 12, batch B families.
import { ApertusParser } from './apertus';
import { CommandR7bParser } from './commandr7b';
import { FunctionaryV31Parser, FunctionaryV32Parser } from './functionary';
import { GigaChat3Parser } from './gigachat3';
import { InternLm2Parser } from './internlm2';
import { KimiK3Parser } from './kimik3';
import { Lfm2Parser } from './lfm2';
import { Olmo3Parser } from './olmo3';
import { FunctoolsParser } from './phi4mini';
// Issue 12, batch A families.
import { ErnieParser } from './ernie';
import { GraniteParser } from './granite';
import { HunyuanParser } from './hunyuan';
import { JambaParser } from './jamba';
import { Step3Parser } from './step3';
import { LongCatLiteParser, LongCatParser } from './longcat';
import { MiniMaxParser } from './minimax';
import { PythonicParser } from './pythonic';
import { SeedOssParser } from './seedoss';
import { XlamParser } from './xlam';
import type { ByteParser, FamilyParser, ParserOptions } from './types';

export interface FamilyInfo {
  name: string;
  aliases: string[];
  description: string;
}

interface FamilyEntry extends FamilyInfo {
  create(opts: ParserOptions): FamilyParser;
}

const FAMILIES: FamilyEntry[] = [
  {
    name: 'hermes',
    aliases: ['qwen', 'qwen2.5', 'qwen25', 'qwen3', 'qwq', 'hermes2', 'hermes3'],
    description: 'Hermes / Qwen2.5 / Qwen3: <tool_call>{"name","arguments"}</tool_call>; <think>',
    create: (o) => new HermesParser(o),
  },
  {
    name: 'qwen3-coder',
    aliases: ['qwen3coder', 'qwen3_coder', 'qwen3-xml', 'qwen3xml'],
    description:
      'Qwen3-Coder XML: <tool_call><function=NAME><parameter=K>V</parameter></function></tool_call>; <think>',
    create: (o) => new Qwen3CoderParser(o),
  },
  {
    name: 'deepseek-v3',
    aliases: ['deepseekv3', 'deepseek_v3', 'deepseek-r1'],
    description:
      'DeepSeek V3 / R1: <｜tool▁calls▁begin｜>…function<｜tool▁sep｜>NAME ```json …```<｜tool▁call▁end｜>; <think>',
    create: (o) => new DeepSeekParser(o, 'v3'),
  },
  {
    name: 'deepseek-v3.1',
    aliases: ['deepseekv31', 'deepseek_v31', 'deepseek-v3-1'],
    description: 'DeepSeek V3.1: <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>; <think>',
    create: (o) => new DeepSeekParser(o, 'v3.1'),
  },
  {
    name: 'deepseek-v4',
    aliases: ['deepseekv4', 'deepseek_v4', 'dsml', 'deepseek-v3.2', 'deepseekv32', 'deepseek_v32'],
    description:
      'DeepSeek V4 / V3.2 DSML: <｜DSML｜tool_calls><｜DSML｜invoke name=…><｜DSML｜parameter …>; <think>',
    create: (o) => new DsmlParser(o),
  },
  {
    name: 'kimi-k2',
    aliases: ['kimik2', 'kimi_k2', 'kimi', 'kimi-k2.5'],
    description:
      'Kimi K2: <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>; <think>',
    create: (o) => new KimiParser(o),
  },
  {
    name: 'glm45',
    aliases: ['glm', 'glm4.5', 'glm-4.5', 'glm4.6', 'glm4.7', 'glm47', 'glm4-moe', 'glm4_moe'],
    description: 'GLM 4.5+: <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>; <think>',
    create: (o) => new GlmParser(o),
  },
  {
    name: 'gpt-oss',
    aliases: ['harmony', 'gptoss', 'gpt_oss', 'openai'],
    description:
      'GPT-OSS harmony: <|channel|>analysis (thinking) / commentary to=functions.NAME …<|call|> / final',
    create: (o) => new HarmonyParser(o),
  },
  {
    name: 'nemotron',
    aliases: ['nemotron-deci', 'nemotron_deci', 'llama-nemotron'],
    description: 'Nemotron: <TOOLCALL>[{"name","arguments"},…]</TOOLCALL>; <think>',
    create: (o) => new NemotronParser(o),
  },
  {
    name: 'mistral',
    aliases: ['magistral', 'devstral'],
    description: 'Mistral: [TOOL_CALLS][{…}] / [TOOL_CALLS]NAME{json} / NAME[ARGS]{json}; [THINK]',
    create: (o) => new MistralParser(o),
  },
  {
    name: 'llama3',
    aliases: ['llama', 'llama3-json', 'llama3_json', 'llama3.1', 'llama3.2', 'llama3.3'],
    description:
      'Llama 3.x JSON: <|python_tag|>{"name","parameters"} or a leading JSON object; ";" between calls',
    create: (o) => new LlamaParser(o),
  },
  {
    name: 'gemma4',
    aliases: ['gemma', 'gemma-4'],
    description: 'Gemma 4: <|tool_call>call:NAME{k:<|"|>v<|"|>}<tool_call|>; <|channel>thought…<channel|>',
    create: (o) => new GemmaParser(o, 'gemma4'),
  },
  {
    name: 'functiongemma',
    aliases: ['function-gemma', 'function_gemma'],
    description: 'FunctionGemma: <start_function_call>call:NAME{k:<escape>v<escape>}<end_function_call>',
    create: (o) => new GemmaParser(o, 'functiongemma'),
  },
  // ---- issue 12, batch B -------------------------------------------------------------------
  {
    name: 'phi-4-mini',
    aliases: ['phi4mini', 'phi4-mini', 'phi-4-mini-instruct', 'phi4_mini_json'],
    description: 'Phi-4-mini: functools[{"name","arguments"},…] or <|tool_call|>{…}<|/tool_call|>',
    create: (o) => new FunctoolsParser(o, 'phi-4-mini'),
  },
  {
    name: 'firefunction-v2',
    aliases: ['firefunction', 'firefunctionv2', 'firefunction_v2'],
    description: 'Firefunction v2: functools[{"name","arguments"},…] after the text',
    create: (o) => new FunctoolsParser(o, 'firefunction-v2'),
  },
  {
    name: 'internlm2',
    aliases: ['internlm', 'internlm2.5', 'internlm25', 'intern-s1', 'interns1'],
    description: 'InternLM2: <|action_start|><|plugin|>{"name","parameters"}<|action_end|>; <think>',
    create: (o) => new InternLm2Parser(o),
  },
  {
    name: 'command-r7b',
    aliases: ['commandr7b', 'command_r7b', 'c4ai-command-r7b', 'cohere-command-r7b'],
    description:
      'Command R7B: <|START_ACTION|>[{"tool_call_id","tool_name","parameters"}]<|END_ACTION|>; <|START_THINKING|>',
    create: (o) => new CommandR7bParser(o),
  },
  {
    name: 'apertus',
    aliases: ['swiss-ai-apertus', 'apertus-8b', 'apertus-70b'],
    description: 'Apertus: <|tools_prefix|>[{"NAME": {args}}]<|tools_suffix|>; <|inner_prefix|>',
    create: (o) => new ApertusParser(o),
  },
  {
    name: 'gigachat3',
    aliases: ['gigachat', 'gigachat-3', 'gigachat_3'],
    description: 'GigaChat 3: function call<|role_sep|>{"name","arguments"}',
    create: (o) => new GigaChat3Parser(o),
  },
  {
    name: 'functionary-v3.1',
    aliases: ['functionaryv31', 'functionary-v31', 'functionary_v3_1', 'functionary-llama3.1'],
    description: 'Functionary v3.1: <function=NAME>{json}</function>; <|python_tag|>code',
    create: (o) => new FunctionaryV31Parser(o),
  },
  {
    name: 'functionary-v3.2',
    aliases: ['functionaryv32', 'functionary-v32', 'functionary_v3_2', 'functionary'],
    description: 'Functionary v3.2: >>>NAME\n{json} / >>>all\ntext',
    create: (o) => new FunctionaryV32Parser(o),
  },
  {
    name: 'kimi-k3',
    aliases: ['kimik3', 'kimi_k3', 'kimi-k3-xtml'],
    description:
      'Kimi K3 XTML: <|open|>call tool="NAME"<|sep|><|open|>argument key="K" type="T"<|sep|>V<|close|>argument<|sep|>…<|close|>call<|sep|>; think channel',
    create: (o) => new KimiK3Parser(o),
  },
  {
    name: 'lfm2',
    aliases: ['lfm2.5', 'lfm25', 'lfm', 'liquid', 'liquid-lfm2'],
    description: 'LFM2 / LFM2.5: <|tool_call_start|>[NAME(k=v), …] or [{"name","arguments"}]<|tool_call_end|>; <think>',
    create: (o) => new Lfm2Parser(o),
  },
  {
    name: 'olmo3',
    aliases: ['olmo', 'olmo-3', 'olmo3-instruct', 'olmo3-think', 'olmo-3-think'],
    description: 'OLMo 3: <function_calls>NAME(k=<json>, …)\nNAME(…)</function_calls>; <think>',
    create: (o) => new Olmo3Parser(o),
  },
  // ---- issue 12, batch A -------------------------------------------------------------------
  {
    name: 'pythonic',
    aliases: [
      'llama3.2-pythonic',
      'llama-3.2-pythonic',
      'llama4',
      'llama-4',
      'llama4-pythonic',
      'llama-4-pythonic',
      'toolace',
      // Gemma 3 / 3n have no tool tokens; Google's function-calling guide prompts this list format.
      'gemma3',
      'gemma3n',
    ],
    description: 'Pythonic: [NAME(k="v", n=1), …] at the start of the output or after <|python_start|>',
    create: (o) => new PythonicParser(o),
  },
  {
    name: 'minimax-m2',
    aliases: ['minimax', 'minimaxm2', 'minimax_m2', 'minimax-m2.1', 'minimax-m2.5'],
    description:
      'MiniMax-M2: <minimax:tool_call><invoke name="N"><parameter name="K">V</parameter></invoke></minimax:tool_call>; <think>',
    create: (o) => new MiniMaxParser(o),
  },
  {
    name: 'seed-oss',
    aliases: ['seedoss', 'seed_oss', 'seed', 'seed-oss-36b'],
    description:
      'Seed-OSS: <seed:tool_call><function=N><parameter=K>V</parameter></function></seed:tool_call>; <seed:think>',
    create: (o) => new SeedOssParser(o),
  },
  {
    name: 'granite',
    aliases: ['granite3', 'granite-3', 'granite-3.x', 'granite4', 'granite-4', 'granite-4.0', 'granite-4.x'],
    description: 'Granite: <|tool_call|>[{"name","arguments"},…] (3.x) / <tool_call>{…}</tool_call> (4.x)',
    create: (o) => new GraniteParser(o),
  },
  {
    name: 'xlam',
    aliases: ['xlam2', 'xlam-2', 'salesforce-xlam'],
    description:
      'xLAM: [{"name","arguments"},…] as the output (or in a ```json fence, or after [TOOL_CALLS])',
    create: (o) => new XlamParser(o),
  },
  {
    name: 'hunyuan',
    aliases: ['hunyuan-a13b', 'hunyuan_a13b', 'hunyuana13b'],
    description: 'Hunyuan-A13B: <answer><tool_calls>[{"name","arguments"},…]</tool_calls></answer>; <think>',
    create: (o) => new HunyuanParser(o),
  },
  {
    name: 'jamba',
    aliases: ['jamba-1.5', 'jamba-1.6', 'jamba-1.7', 'ai21-jamba'],
    description: 'AI21 Jamba: <tool_calls>[{"name","arguments"},…]</tool_calls>',
    create: (o) => new JambaParser(o),
  },
  {
    name: 'step3',
    aliases: ['step-3', 'stepfun-step3'],
    description:
      'StepFun Step-3: <｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="N"><steptml:parameter name="K">V</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>',
    create: (o) => new Step3Parser(o),
  },
  {
    name: 'gigachat35',
    aliases: ['gigachat-3.5'],
    description:
      'GigaChat 3.5: <｜GCML｜tool_calls><｜GCML｜invoke name="N"><｜GCML｜parameter name="K" string="true|false">V</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>',
    create: (o) => new DsmlParser(o, 'gigachat35', GCML),
  },
  {
    name: 'ernie45',
    aliases: ['ernie', 'ernie-4.5', 'ernie-4.5-thinking'],
    description: 'ERNIE 4.5: <tool_call>{"name","arguments"}</tool_call>; </think>; <response>…</response>',
    create: (o) => new ErnieParser(o),
  },
  {
    name: 'longcat',
    aliases: ['longcat-flash', 'longcat-flash-chat', 'longcat-flash-thinking'],
    description:
      'LongCat-Flash: <longcat_tool_call>{"name","arguments"}</longcat_tool_call>; <longcat_think>',
    create: (o) => new LongCatParser(o),
  },
  {
    name: 'longcat-lite',
    aliases: ['longcat-flash-lite', 'longcat_lite'],
    description:
      'LongCat-Flash-Lite: <longcat_tool_call>NAME<longcat_arg_key>K</longcat_arg_key><longcat_arg_value>V</longcat_arg_value></longcat_tool_call>',
    create: (o) => new LongCatLiteParser(o),
  },
];

function norm(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]/g, '');
}

const BY_NAME = new Map<string, FamilyEntry>();
for (const f of FAMILIES) {
  for (const n of [f.name, ...f.aliases]) BY_NAME.set(norm(n), f);
}

export function listFamilies(): FamilyInfo[] {
  return FAMILIES.map(({ name, aliases, description }) => ({ name, aliases: [...aliases], description }));
}

/** The canonical family name for a name or alias (case, dots, dashes and underscores ignored). */
export function resolveFamily(family: string): string | undefined {
  return BY_NAME.get(norm(family))?.name;
}

/** A parser for a family (name or alias). Throws for an unknown family (a configuration error). */
export function createTextParser(family: string, opts: ParserOptions = {}): FamilyParser {
  const f = BY_NAME.get(norm(family));
  if (f === undefined) {
    throw new Error(`unknown parser family "${family}"; known: ${FAMILIES.map((x) => x.name).join(', ')}`);
  }
  return f.create(opts);
}

/** A parser fed UTF-8 bytes (multi-byte characters split across chunks are decoded whole). */
export function createByteParser(family: string, opts: ParserOptions = {}): ByteParser {
  return byteParser(createTextParser(family, opts));
}
