/**
 * Provider-neutral conversation history: what a turn appends. Converters to and from the four
 * provider shapes (Anthropic, OpenAI chat, OpenAI Responses, Gemini) live beside this file.
 */

export interface ToolCallRecord {
  /** The call id as the provider wrote it (or minted by sluice when the provider has none). */
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** Why a result was made up by sluice instead of produced by the tool. */
export type SyntheticReason =
  | 'interrupted' // user abort while the tool was pending/running (onAbort: 'commit')
  | 'suppressed' // a structured-output sibling
  | 'invalid_input' // arguments were not a JSON object / failed the schema
  | 'denied' // approval denied (or the approval callback threw)
  | 'unknown_tool'
  | 'timeout'
  | 'repaired'; // added by repairHistory() for an orphan call

export interface ToolResultRecord {
  callId: string;
  name: string;
  /** false when the result is an error (tool error, throw, timeout, synthetic error). */
  ok: boolean;
  /** Result text as given to the model. */
  content: string;
  synthetic?: SyntheticReason;
}

export type HistoryMessage =
  | { role: 'user'; content: string }
  | {
      role: 'assistant';
      content: string;
      thinking?: string;
      /** The provider's signature over `thinking` (Anthropic needs it to accept the block back). */
      thinkingSignature?: string;
      calls: ToolCallRecord[];
    }
  | { role: 'tool'; results: ToolResultRecord[] };

export interface InvariantViolation {
  /** Which SPEC §7 invariant: I1..I6. */
  invariant: 'I1' | 'I2' | 'I3' | 'I4' | 'I5' | 'I6';
  /** Position in the history (message index) when it applies. */
  at?: number;
  callId?: string;
  message: string;
}
