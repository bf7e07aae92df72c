/**
 * Statechart diagrams generated from the machines themselves (walks `machine.root`), so they can
 * never drift from the code: Mermaid `stateDiagram-v2` (renders on GitHub) and Graphviz DOT (for
 * the SVGs in visualizations/, rendered by scripts/viz.ts with @hpcc-js/wasm-graphviz).
 *
 * What is shown: every state (initial, final, nested and parallel), every transition with its event,
 * guard and action names (`event [guard] / action, action`), eventless `always` transitions,
 * delayed `after` transitions, invoked actors (`invoke runTool`, with their done/error
 * transitions), entry/exit actions, and targetless (internal) transitions listed inside their
 * state. Inline functions show by their name or as `inline`: name everything in `setup()`.
 */

/** The parts of an XState v5 StateNode this walker reads (kept structural: no internal imports). */
export interface VizStateNode {
  key: string;
  id: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  states: Record<string, VizStateNode>;
  initial?: { target: VizStateNode[] };
  transitions: Map<string, VizTransition[]>;
  always?: VizTransition[];
  entry: unknown[];
  exit: unknown[];
  invoke: { src: unknown; id: string }[];
  description?: string;
}

export interface VizTransition {
  target?: VizStateNode[];
  guard?: unknown;
  actions: unknown[];
  eventType: string;
  reenter?: boolean;
  delay?: unknown;
}

export interface VizMachine {
  id: string;
  root: VizStateNode;
}

/** Name of an action (string, `{type}`, named function; XState built-ins without their prefix). */
export function actionName(a: unknown): string | undefined {
  let name: string | undefined;
  let params = '';
  if (typeof a === 'string') name = a;
  else if (typeof a === 'function') name = (a as { type?: string }).type ?? (a.name || 'inline');
  else if (a && typeof a === 'object' && typeof (a as { type?: unknown }).type === 'string') {
    name = (a as { type: string }).type;
    params = paramsText((a as { params?: unknown }).params);
  }
  if (name === undefined) return undefined;
  // The delayed-event plumbing of `after` (raise on entry, cancel on exit) is not a user action.
  if (name === 'xstate.raise' || name === 'xstate.cancel') return undefined;
  return (name.startsWith('xstate.') ? name.slice('xstate.'.length) : name) + params;
}

/** Static params of a parameterized action or guard, as `(a, b)` when they are all primitives. */
function paramsText(p: unknown): string {
  if (p === null || typeof p !== 'object') return '';
  const vals = Object.values(p as Record<string, unknown>);
  if (vals.length === 0 || !vals.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) return '';
  return `(${vals.map(String).join(', ')})`;
}

/** Name of a guard, including higher-order `and`/`or`/`not`/`stateIn` guards. */
export function guardName(g: unknown): string | undefined {
  if (g === undefined || g === null) return undefined;
  if (typeof g === 'string') return g;
  if (typeof g === 'function') {
    const f = g as { guards?: unknown[]; check?: unknown; stateValue?: unknown; name: string };
    const inner = Array.isArray(f.guards) ? f.guards.map((x) => guardName(x) ?? 'inline') : undefined;
    if (inner && f.name) {
      const op = /not/i.test(f.name) ? 'not' : /or/i.test(f.name) ? 'or' : 'and';
      return op === 'not' ? `!${inner[0]}` : inner.join(op === 'and' ? ' && ' : ' || ');
    }
    if (f.stateValue !== undefined) return `in ${JSON.stringify(f.stateValue)}`;
    return f.name || 'inline';
  }
  if (typeof g === 'object' && typeof (g as { type?: unknown }).type === 'string') {
    return (g as { type: string }).type + paramsText((g as { params?: unknown }).params);
  }
  return 'inline';
}

function srcName(src: unknown): string {
  if (typeof src === 'string') return src;
  if (src && typeof src === 'object' && typeof (src as { id?: unknown }).id === 'string') return (src as { id: string }).id;
  return 'inline';
}

/** A readable event label: `after retryDelay`, `runTool done`, `runTool error`, or the event type. */
function eventLabel(node: VizStateNode, t: VizTransition): string {
  const ev = t.eventType;
  if (ev.startsWith('xstate.after.')) {
    const d = t.delay;
    return `after ${typeof d === 'number' ? `${d} ms` : typeof d === 'string' ? d : 'delay'}`;
  }
  for (const kind of ['done', 'error'] as const) {
    const prefix = `xstate.${kind}.actor.`;
    if (ev.startsWith(prefix)) {
      const id = ev.slice(prefix.length);
      const inv = node.invoke.find((i) => i.id === id);
      return `${inv ? srcName(inv.src) : id} ${kind}`;
    }
  }
  if (ev.startsWith('xstate.done.state.')) return 'onDone';
  return ev;
}

export function transitionLabel(node: VizStateNode, t: VizTransition, eventless = false): string {
  const parts = [eventless ? 'always' : eventLabel(node, t)];
  const g = guardName(t.guard);
  if (g) parts.push(`[${g}]`);
  const acts = t.actions.map(actionName).filter((x): x is string => x !== undefined);
  if (acts.length) parts.push(`/ ${acts.join(', ')}`);
  return parts.join(' ');
}

interface Edge {
  from: VizStateNode;
  to: VizStateNode;
  label: string;
}

interface Walk {
  /** Targetless transitions and entry/exit/invoke, per state id. */
  notes: Map<string, string[]>;
  edges: Edge[];
}

function walk(machine: VizMachine): Walk {
  const notes = new Map<string, string[]>();
  const edges: Edge[] = [];
  const visit = (node: VizStateNode): void => {
    const lines: string[] = [];
    const entry = node.entry.map(actionName).filter((x): x is string => x !== undefined);
    if (entry.length) lines.push(`entry / ${entry.join(', ')}`);
    const exit = node.exit.map(actionName).filter((x): x is string => x !== undefined);
    if (exit.length) lines.push(`exit / ${exit.join(', ')}`);
    for (const inv of node.invoke) lines.push(`invoke ${srcName(inv.src)}`);
    for (const ts of node.transitions.values()) {
      for (const t of ts) {
        const label = transitionLabel(node, t);
        if (!t.target || t.target.length === 0) lines.push(label);
        else for (const to of t.target) edges.push({ from: node, to, label });
      }
    }
    for (const t of node.always ?? []) {
      const label = transitionLabel(node, t, true);
      if (!t.target || t.target.length === 0) lines.push(label);
      else for (const to of t.target) edges.push({ from: node, to, label });
    }
    notes.set(node.id, lines);
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(machine.root);
  return { notes, edges };
}

/** Mermaid ids: dots and dashes are not allowed; keep them unique and readable. */
function mid(node: VizStateNode): string {
  return node.id.replace(/[^A-Za-z0-9_]/g, '_');
}

/** Characters Mermaid's state-diagram parser chokes on in labels. */
function mtext(s: string): string {
  return s.replace(/[:;#{}"]/g, ' ').replace(/-->/g, '→');
}

export function toMermaid(machine: VizMachine): string {
  const { notes, edges } = walk(machine);
  const out: string[] = ['stateDiagram-v2', `  %% generated from the ${machine.id} machine by scripts/viz.ts — do not edit`];
  const emit = (node: VizStateNode, depth: number): void => {
    const pad = '  '.repeat(depth);
    const children = Object.values(node.states);
    if (node.initial && node.initial.target.length && children.length) {
      for (const t of node.initial.target) out.push(`${pad}[*] --> ${mid(t)}`);
    }
    children.forEach((child, i) => {
      if (node.type === 'parallel' && i > 0) out.push(`${pad}--`);
      const grand = Object.values(child.states);
      if (grand.length) {
        out.push(`${pad}state "${mtext(child.key)}" as ${mid(child)} {`);
        emit(child, depth + 1);
        out.push(`${pad}}`);
      } else {
        out.push(`${pad}state "${mtext(child.key)}" as ${mid(child)}`);
      }
      for (const line of notes.get(child.id) ?? []) out.push(`${pad}${mid(child)} : ${mtext(line)}`);
      if (child.type === 'final') out.push(`${pad}${mid(child)} --> [*]`);
    });
  };
  emit(machine.root, 1);
  for (const e of edges) out.push(`  ${mid(e.from)} --> ${mid(e.to)} : ${mtext(e.label)}`);
  const rootNotes = notes.get(machine.root.id) ?? [];
  const first = machine.root.initial?.target[0];
  if (rootNotes.length && first) {
    out.push(`  note left of ${mid(first)}`);
    out.push(`    in every state of ${mtext(machine.id)}`);
    for (const l of rootNotes) out.push(`    ${mtext(l)}`);
    out.push('  end note');
  }
  return out.join('\n') + '\n';
}

function dq(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

function html(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * A transition (or note) label as short lines, so the drawing stays narrow: the event and guard
 * on the first line (the guard on its own line when both do not fit), then the actions, broken
 * after commas to at most `width` characters a line.
 */
export function wrapLabel(label: string, width = 24): string[] {
  if (label.length <= width) return [label];
  const slash = label.indexOf(' / ');
  const head = slash >= 0 ? label.slice(0, slash) : label;
  const guard = head.indexOf(' [');
  const lines = head.length > width && guard > 0 ? [head.slice(0, guard), head.slice(guard + 1)] : [head];
  if (slash < 0) return lines;
  let line = '/';
  for (const act of label.slice(slash + 3).split(', ')) {
    const piece = line === '/' ? `/ ${act}` : `${line}, ${act}`;
    if (piece.length > width && line !== '/') {
      lines.push(`${line},`);
      line = `  ${act}`;
    } else line = piece;
  }
  lines.push(line);
  return lines;
}

/**
 * Graphviz DOT of the same walk (clusters for compound states). Laid out top to bottom with
 * wrapped labels so the SVG stays about as wide as a README column (~880 px) and its text keeps
 * its size there (test/viz checks the rendered width).
 */
export function toDot(machine: VizMachine): string {
  const { notes, edges } = walk(machine);
  const nid = (n: VizStateNode): string => `"${dq(n.id)}"`;
  const out: string[] = [
    `digraph "${dq(machine.id)}" {`,
    `  // generated from the ${machine.id} machine by scripts/viz.ts — do not edit`,
    '  graph [rankdir=TB, fontname="Helvetica", fontsize=11, nodesep=0.1, ranksep=0.65, compound=true, newrank=true];',
    '  node [fontname="Helvetica", fontsize=11, shape=box, style="rounded,filled", fillcolor="#f5f8fc", color="#4c78a8", margin="0.22,0.06"];',
    '  edge [fontname="Helvetica", fontsize=9, color="#555555", fontcolor="#333333"];',
  ];
  const stateLabel = (node: VizStateNode): string => {
    const rows = [`<TR><TD><B>${html(node.key)}</B></TD></TR>`];
    for (const l of notes.get(node.id) ?? []) {
      for (const w of wrapLabel(l, 30)) rows.push(`<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="9">${html(w)}</FONT></TD></TR>`);
    }
    return `<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">${rows.join('')}</TABLE>>`;
  };
  // Edges into or out of a compound state attach to its initial leaf, clipped at the cluster.
  const anchor = (n: VizStateNode): VizStateNode => {
    let cur = n;
    for (;;) {
      const kids = Object.values(cur.states);
      if (kids.length === 0) return cur;
      cur = (cur.type === 'parallel' ? kids[0] : cur.initial?.target[0]) ?? kids[0]!;
    }
  };
  const emit = (node: VizStateNode, depth: number): void => {
    const pad = '  '.repeat(depth);
    const children = Object.values(node.states);
    if (node.initial && node.initial.target.length && children.length) {
      out.push(`${pad}"${dq(node.id)}.__initial" [shape=point, width=0.12, label="", style=filled, fillcolor="#222222", color="#222222"];`);
      for (const t of node.initial.target) out.push(`${pad}"${dq(node.id)}.__initial" -> ${nid(anchor(t))};`);
    }
    for (const child of children) {
      if (Object.keys(child.states).length) {
        out.push(`${pad}subgraph "cluster_${dq(child.id)}" {`);
        out.push(`${pad}  label=${stateLabel(child)}; style="rounded"; color="#4c78a8";${child.type === 'parallel' ? ' style="rounded,dashed";' : ''}`);
        emit(child, depth + 1);
        out.push(`${pad}}`);
      } else {
        const extra = child.type === 'final' ? ', peripheries=2' : '';
        out.push(`${pad}${nid(child)} [label=${stateLabel(child)}${extra}];`);
      }
    }
  };
  out.push(`  subgraph "cluster_${dq(machine.root.id)}" {`);
  const rootNotes = notes.get(machine.root.id) ?? [];
  out.push(`    label=<<B>${html(machine.id)}</B>>; labeljust="l"; style="rounded"; color="#999999";`);
  emit(machine.root, 2);
  if (rootNotes.length) {
    const rows = [`<TR><TD ALIGN="LEFT"><I>in every state</I></TD></TR>`, ...rootNotes.flatMap((l) => wrapLabel(l, 30)).map((l) => `<TR><TD ALIGN="LEFT">${html(l)}</TD></TR>`)];
    out.push(`    "${dq(machine.root.id)}.__notes" [shape=note, style=filled, fillcolor="#fffbe6", color="#c9b458", fontsize=9, label=<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0">${rows.join('')}</TABLE>>];`);
  }
  out.push('  }');
  for (const e of edges) {
    const from = anchor(e.from);
    const to = anchor(e.to);
    const attrs = [`label="${wrapLabel(e.label).map(dq).join('\\n')}"`];
    if (from !== e.from) attrs.push(`ltail="cluster_${dq(e.from.id)}"`);
    if (to !== e.to) attrs.push(`lhead="cluster_${dq(e.to.id)}"`);
    if (e.label.startsWith('always')) attrs.push('style=dashed');
    out.push(`  ${nid(from)} -> ${nid(to)} [${attrs.join(', ')}];`);
  }
  out.push('}');
  return out.join('\n') + '\n';
}
