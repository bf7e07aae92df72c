import { getInitialSnapshot, getNextSnapshot } from 'xstate';
import { getAdjacencyMap, getShortestPaths, serializeSnapshot } from 'xstate/graph';
import {
  createTurnModel,
  enabledEvents,
  type ModelEvent,
  type ModelOptions,
  type ModelSnapshot,
  type TurnModel,
} from './turnModel';

/**
 * The model's reachable state graph and the two path generators replayed on the real turn actor:
 *
 * - `shortestPaths`: xstate/graph `getShortestPaths` — one shortest path to every reachable state
 *   (state coverage).
 * - `edgeCoverPaths`: every edge (state, event) of the adjacency map at least once (100%
 *   transition coverage). A path is the shortest path to an uncovered edge, that edge, then a
 *   greedy walk along further uncovered edges until the walk reaches a state with none; paths
 *   that are a prefix of another are dropped.
 *
 * Both come from the same `getAdjacencyMap` traversal (events: `enabledEvents`, i.e. the model's
 * own guards decide what the environment may do next).
 */

export interface ModelStep {
  event: ModelEvent;
  /** Model state after the event (and all its eventless transitions). */
  state: ModelSnapshot;
  /** Edge id in the graph. */
  edge: number;
}

export interface ModelPath {
  steps: ModelStep[];
}

export interface ModelGraph {
  n: number;
  model: TurnModel;
  options: ModelOptions;
  initial: ModelSnapshot;
  /** Serialized state → vertex id. */
  ids: Map<string, number>;
  states: ModelSnapshot[];
  /** Outgoing edges per vertex. */
  out: number[][];
  edges: Array<{ from: number; to: number; event: ModelEvent }>;
  buildMs: number;
}

const stateKey = (s: ModelSnapshot) => serializeSnapshot(s);

export function buildGraph(n: number, options: ModelOptions = {}): ModelGraph {
  const t0 = performance.now();
  const model = createTurnModel(n, options);
  const adj = getAdjacencyMap(model, {
    events: (s: ModelSnapshot) => enabledEvents(s, options),
  });
  const ids = new Map<string, number>();
  const states: ModelSnapshot[] = [];
  for (const [k, v] of Object.entries(adj)) {
    ids.set(k, states.length);
    states.push(v.state as ModelSnapshot);
  }
  const out: number[][] = states.map(() => []);
  const edges: ModelGraph['edges'] = [];
  for (const [k, v] of Object.entries(adj)) {
    const from = ids.get(k)!;
    for (const t of Object.values(v.transitions) as Array<{ event: ModelEvent; state: ModelSnapshot }>) {
      const to = ids.get(stateKey(t.state));
      if (to === undefined) throw new Error('adjacency map: a target state is missing');
      out[from]!.push(edges.length);
      edges.push({ from, to, event: t.event });
    }
  }
  const initial = states[0]!;
  return { n, model, options, initial, ids, states, out, edges, buildMs: performance.now() - t0 };
}

/** BFS tree from the initial state: the edge that first reached each vertex. */
function bfsTree(g: ModelGraph): Int32Array {
  const parentEdge = new Int32Array(g.states.length).fill(-2);
  parentEdge[0] = -1;
  const queue = [0];
  for (let h = 0; h < queue.length; h++) {
    const v = queue[h]!;
    for (const e of g.out[v]!) {
      const to = g.edges[e]!.to;
      if (parentEdge[to] !== -2) continue;
      parentEdge[to] = e;
      queue.push(to);
    }
  }
  return parentEdge;
}

function pathTo(g: ModelGraph, parentEdge: Int32Array, v: number): number[] {
  const es: number[] = [];
  while (parentEdge[v]! >= 0) {
    const e = parentEdge[v]!;
    es.push(e);
    v = g.edges[e]!.from;
  }
  return es.reverse();
}

function toPath(g: ModelGraph, edgeIds: number[]): ModelPath {
  return { steps: edgeIds.map((e) => ({ event: g.edges[e]!.event, state: g.states[g.edges[e]!.to]!, edge: e })) };
}

/** Drop paths whose edge sequence is a prefix of another path's. */
function dropPrefixes(paths: number[][]): number[][] {
  const sorted = [...paths].sort((a, b) => b.length - a.length);
  const prefixes = new Set<string>();
  const kept: number[][] = [];
  for (const p of sorted) {
    const k = p.join(',');
    if (prefixes.has(k)) continue;
    kept.push(p);
    for (let i = 1; i <= p.length; i++) prefixes.add(p.slice(0, i).join(','));
  }
  return kept;
}

export function edgeCoverPaths(g: ModelGraph): ModelPath[] {
  const parentEdge = bfsTree(g);
  const depth = new Int32Array(g.states.length);
  for (let v = 1; v < g.states.length; v++) depth[v] = pathTo(g, parentEdge, v).length;
  const covered = new Uint8Array(g.edges.length);
  // Uncovered edges in order of the depth of their source: short prefixes first.
  const order = g.edges.map((_, i) => i).sort((a, b) => depth[g.edges[a]!.from]! - depth[g.edges[b]!.from]! || a - b);
  const paths: number[][] = [];
  for (const e0 of order) {
    if (covered[e0]) continue;
    const p = [...pathTo(g, parentEdge, g.edges[e0]!.from), e0];
    let v = g.edges[e0]!.to;
    for (;;) {
      const next = g.out[v]!.find((e) => !covered[e] && !p.includes(e));
      if (next === undefined) break;
      p.push(next);
      v = g.edges[next]!.to;
    }
    for (const e of p) covered[e] = 1;
    paths.push(p);
  }
  return dropPrefixes(paths).map((p) => toPath(g, p));
}

/** xstate/graph's shortest paths (one per reachable state), mapped onto the graph's edges. */
export function shortestPaths(g: ModelGraph): ModelPath[] {
  const sp = getShortestPaths(g.model, { events: (s: ModelSnapshot) => enabledEvents(s, g.options) });
  const all = sp.map((path) => {
    const es: number[] = [];
    let v = 0;
    // steps[0] is the xstate.init step; each later step is (event, state reached).
    for (const step of path.steps.slice(1)) {
      const to = g.ids.get(stateKey(step.state as ModelSnapshot));
      const e = g.out[v]!.find((x) => g.edges[x]!.to === to && JSON.stringify(g.edges[x]!.event) === JSON.stringify(step.event));
      if (e === undefined) throw new Error('shortest path step is not an edge of the adjacency map');
      es.push(e);
      v = to!;
    }
    return es;
  });
  return dropPrefixes(all.filter((p) => p.length > 0)).map((p) => toPath(g, p));
}

/** The model path for a given event sequence (each event must be enabled in turn); edges are -1. */
export function pathOfEvents(n: number, events: ModelEvent[], options: ModelOptions = {}): { initial: ModelSnapshot; path: ModelPath } {
  const model = createTurnModel(n, options);
  const initial = getInitialSnapshot(model) as ModelSnapshot;
  let s = initial;
  const steps = events.map((event) => {
    if (!enabledEvents(s, options).some((e) => JSON.stringify(e) === JSON.stringify(event))) {
      throw new Error(`not enabled in the model: ${JSON.stringify(event)}`);
    }
    s = getNextSnapshot(model, s, event) as ModelSnapshot;
    return { event, state: s, edge: -1 };
  });
  return { initial, path: { steps } };
}

/** States reachable backwards from `targets` (for liveness: can every state still finish?). */
export function canReach(g: ModelGraph, targets: (s: ModelSnapshot) => boolean): Uint8Array {
  const incoming: number[][] = g.states.map(() => []);
  for (const e of g.edges) incoming[e.to]!.push(e.from);
  const ok = new Uint8Array(g.states.length);
  const queue: number[] = [];
  g.states.forEach((s, v) => {
    if (targets(s)) {
      ok[v] = 1;
      queue.push(v);
    }
  });
  for (let h = 0; h < queue.length; h++) {
    for (const u of incoming[queue[h]!]!) {
      if (!ok[u]) {
        ok[u] = 1;
        queue.push(u);
      }
    }
  }
  return ok;
}
