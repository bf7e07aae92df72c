/**
 * Safety classification (SPEC §6.2): which calls may start early, while the model still streams.
 *
 * A tool's own `isConcurrencySafe(input)` decides when the tool has one (a throw counts as unsafe).
 * Otherwise: safe = kind `read`, `search` or `fetch`; plus kind `execute` when the command (input field
 * `commandField`, default `command`) is classified read-only by the fail-closed shell
 * classifier. Everything else — `edit`, `delete`, `move`, `think`, `other`, unknown tools,
 * an execute call without a string command — is unsafe.
 *
 * `think` is not safe: in real harnesses it covers memory/todo writers (qwen-code excludes it too).
 */
import { classifyCommand, loadShellParser, shellParserLoaded } from './shell';
import { type AnyTool, beginValidation, type ToolRegistry, type ToolRunResult, needsApproval } from './tools';

export const SAFE_KINDS: ReadonlySet<string> = new Set(['read', 'search', 'fetch']);

export const DEFAULT_COMMAND_FIELD = 'command';

export interface SafetyOptions {
  /** Input field holding the shell command of `execute` tools (default `command`; a tool's own `commandField` wins). */
  commandField?: string;
}

/** Is this call safe to start early? Unknown tools (undefined) are never safe. Never throws. */
export function isSafeCall(tool: AnyTool | undefined | null, input: unknown, opts: SafetyOptions = {}): boolean {
  return explainSafety(tool, input, opts).safe;
}

/** `isSafeCall` with the reason (for traces and UIs; names kinds/programs, never arguments). */
export function explainSafety(
  tool: AnyTool | undefined | null,
  input: unknown,
  opts: SafetyOptions = {},
): { safe: boolean; reason: string } {
  if (!tool) return { safe: false, reason: 'unknown tool' };
  if (tool.isConcurrencySafe) {
    try {
      const safe = tool.isConcurrencySafe(input) === true;
      return { safe, reason: safe ? 'isConcurrencySafe: yes' : 'isConcurrencySafe: no' };
    } catch {
      return { safe: false, reason: 'isConcurrencySafe threw' };
    }
  }
  if (SAFE_KINDS.has(tool.kind)) return { safe: true, reason: `kind ${tool.kind}` };
  if (tool.kind !== 'execute') return { safe: false, reason: `kind ${tool.kind}` };
  const fieldName = tool.commandField ?? opts.commandField ?? DEFAULT_COMMAND_FIELD;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { safe: false, reason: 'execute call without an input object' };
  }
  const command = (input as Record<string, unknown>)[fieldName];
  if (typeof command !== 'string') return { safe: false, reason: `execute call without a string ${fieldName}` };
  const c = classifyCommand(command);
  return { safe: c.readOnly, reason: c.readOnly ? c.reason : `not read-only: ${c.reason}` };
}

/**
 * Loads what classifying this registry's calls needs before a turn starts: the shell parser when
 * a tool of kind `execute` has no `isConcurrencySafe` of its own (its commands are classified by
 * the shell classifier). Resolves at once otherwise, so turns without shell tools never load it.
 */
export function prepareSafety(registry: ToolRegistry): Promise<void> | undefined {
  if (shellParserLoaded()) return undefined;
  const needsShell = registry.list().some((t) => t.kind === 'execute' && t.isConcurrencySafe === undefined);
  return needsShell ? loadShellParser() : undefined;
}

/** What the turn controller needs to know about a ready call (structurally the turn machine's `Classification`). */
export interface CallClassification {
  safe: boolean;
  needsApproval: boolean;
  /** An error result to give without running: unknown tool or schema-invalid input. */
  problem?: ToolRunResult;
}

/**
 * Classify a ready call against a registry: unknown tool → problem (synthetic 'unknown_tool'),
 * schema-invalid input → problem (synthetic 'invalid_input'); otherwise safety from
 * `isSafeCall` and approval from the tool's `needsApproval` (a throwing predicate counts as
 * "needs approval"). A call with a problem is reported unsafe and needing no approval: it is
 * never run. Never throws.
 */
export function classifyCall(
  registry: ToolRegistry,
  name: string,
  input: unknown,
  opts: SafetyOptions = {},
): CallClassification {
  const tool = registry.get(name);
  if (!tool) {
    return {
      safe: false,
      needsApproval: false,
      problem: { ok: false, content: `Unknown tool ${name}: it is not registered, so it was not run.`, synthetic: 'unknown_tool' },
    };
  }
  const valid = beginValidation(tool, input);
  if (valid instanceof Promise) {
    // An asynchronous validator cannot be judged here (classification is synchronous): the call
    // is judged fail-closed (safe only by kind, approval whenever the tool may ask for it) and
    // validated for real before it runs (runTool).
    valid.catch(() => undefined);
    return {
      safe: tool.isConcurrencySafe === undefined && SAFE_KINDS.has(tool.kind),
      needsApproval: tool.needsApproval !== undefined && tool.needsApproval !== false,
    };
  }
  if (!valid.ok) {
    return { safe: false, needsApproval: false, problem: { ok: false, content: valid.message, synthetic: 'invalid_input' } };
  }
  return { safe: isSafeCall(tool, valid.value, opts), needsApproval: needsApproval(tool, valid.value) };
}
