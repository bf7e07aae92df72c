/**
 * #19 item "nested values typed below the top level": what the reference servers do with a
 * parameter whose schema is an object or array with typed members, in every XML-parameter family
 * that types values by schema (core/schemaValue.ts), whole and at every byte split.
 *
 * Source (facts only): vllm-project/vllm vllm/entrypoints/openai/tool_parsers/qwen3coder_tool_parser.py
 * `_convert_param_value` types by the parameter's own top-level `type` only: for `object`/`array`
 * it returns `json.loads(value)` (else `ast.literal_eval`) and never looks at `properties` or
 * `items`; SGLang's Qwen3CoderDetector types through `infer_type_from_json_schema` of the
 * parameter's schema, also top level only. So a member the model wrote as `"5"` under an
 * `integer` member schema stays the string `"5"` there, and so it does here: the tool's own input
 * validation reports it (docs/parsers.md, "Value typing"). Only the top level is typed.
 */
import { compileSchema, typeValue } from '../../src/parsers/core/schemaValue';
import { describePublishedOutputs, type PublishedOutput } from './familySuite';
import { fnTool as tool } from './helpers';

const SRC = 'vllm-project/vllm vllm/entrypoints/openai/tool_parsers/qwen3coder_tool_parser.py (_convert_param_value)';

const objSchema = { type: 'object', properties: { n: { type: 'integer' }, ok: { type: 'boolean' } } };
const arrSchema = { type: 'array', items: { type: 'number' } };
const tools = [tool('configure', { cfg: objSchema, xs: arrSchema, label: { type: 'string' } })];

const CFG = '{"n": "5", "ok": "true", "m": {"k": 1}}';
const XS = '["1.5", 2, "3"]';
const args = { cfg: { n: '5', ok: 'true', m: { k: 1 } }, xs: ['1.5', 2, '3'], label: '{"n": "5"}' };

/** Each family's markup for one call of `configure` with cfg, xs and label (same raw values). */
const layouts: Record<string, (p: [string, string][]) => string> = {
  'qwen3-coder': (p) =>
    `<tool_call>\n<function=configure>\n${p.map(([k, v]) => `<parameter=${k}>\n${v}\n</parameter>\n`).join('')}</function>\n</tool_call>`,
  glm45: (p) =>
    `<tool_call>configure\n${p.map(([k, v]) => `<arg_key>${k}</arg_key>\n<arg_value>${v}</arg_value>\n`).join('')}</tool_call>`,
  'minimax-m2': (p) =>
    `<minimax:tool_call>\n<invoke name="configure">\n${p.map(([k, v]) => `<parameter name="${k}">${v}</parameter>\n`).join('')}</invoke>\n</minimax:tool_call>`,
  step3: (p) =>
    `<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="configure">${p
      .map(([k, v]) => `<steptml:parameter name="${k}">${v}</steptml:parameter>`)
      .join('')}</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>`,
};

const params: [string, string][] = [
  ['cfg', CFG],
  ['xs', XS],
  ['label', '{"n": "5"}'],
];

describePublishedOutputs(
  Object.entries(layouts).map(
    ([family, render]): PublishedOutput => ({
      family,
      title: 'object/array members keep the types the model wrote (top level typed only)',
      source: SRC,
      input: render(params),
      calls: [{ name: 'configure', args }],
      opts: { tools },
    }),
  ),
);

describe('typeValue below the top level', () => {
  it('parses an object/array value as written; members are not typed by their sub-schema', () => {
    expect(JSON.parse(typeValue(CFG, compileSchema(objSchema)))).toEqual(args.cfg);
    expect(JSON.parse(typeValue(XS, compileSchema(arrSchema)))).toEqual(args.xs);
    // Members already of their type stay so; the top level itself is still typed.
    expect(JSON.parse(typeValue('{"n": 5, "ok": false}', compileSchema(objSchema)))).toEqual({ n: 5, ok: false });
    expect(JSON.parse(typeValue('[1.5, 2]', compileSchema(arrSchema)))).toEqual([1.5, 2]);
    // Not an object where one is required: kept as the model's text.
    expect(JSON.parse(typeValue('[1]', compileSchema(objSchema)))).toBe('[1]');
  });
});
