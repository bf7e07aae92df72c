/**
 * A conservative, fail-closed read-only shell classifier (SPEC §6.2), built on a real shell
 * parser: `mvdan-sh`, the JavaScript build of Go's mvdan.cc/sh/v3/syntax (bash dialect).
 * Why a parser and not regexes or a tokenizer: see docs/safety.md.
 *
 * A command is read-only only when the whole AST is made of constructs this file understands
 * and every simple command in it is an allow-listed program whose arguments pass that program's
 * check. Everything else — unknown node types, unknown programs, parse errors — is NOT
 * read-only. The classifier never throws and never logs the command.
 *
 * Reasons name programs and flags, never whole arguments.
 */

/** Thrown inside the analysis for "not read-only"; caught in classifyCommand. */
class Unsafe extends Error {}

// ---------------------------------------------------------------------------------------------
// mvdan-sh: loaded lazily (loadShellParser; 1.5 MB of GopherJS output, ~0.2 s to load) and read through its raw
// GopherJS objects. The package's JS wrappers (`syntax.NodeType`, `syntax.Walk`, wrapped field
// access) cost 50–150 µs per call — ~20 ms per command — while the raw structs are plain JS
// objects: Go pointers are objects whose `constructor.string` names the type ("*syntax.CallExpr"),
// nil pointers are `constructor.nil`, a nil interface has no type string, slices are
// `{ $array, $offset, $length }`, and Go strings are byte strings (UTF-8 bytes as char codes).
// The accessors below check those shapes and throw on anything else, and a self-test at load
// time checks the layout on known commands; if it fails, nothing is read-only (fail closed).

interface GoValue {
  constructor: { string?: unknown; nil?: unknown };
  [field: string]: unknown;
}
interface ShSyntax {
  NewParser(...opts: unknown[]): { Parse(src: string, name: string): { __internal_object__: unknown } };
}

/** Go type of a raw value without the package prefix ("CallExpr", "[]*syntax.Word"); '' for nil. */
function goType(v: unknown): string {
  if (v === null || typeof v !== 'object') return '';
  const ctor = (v as GoValue).constructor;
  const name = ctor?.string;
  if (typeof name !== 'string' || v === ctor.nil) return '';
  return name.startsWith('*syntax.') ? name.slice(8) : name;
}

/** A struct field that must exist (a missing one means the layout is not what we expect). */
function field(node: GoValue, name: string): unknown {
  if (!(name in node)) throw new Unsafe('shell AST layout not recognised');
  return node[name];
}

/** A pointer/interface field: the node, or null when nil. */
function child(node: GoValue, name: string): GoValue | null {
  const v = field(node, name);
  return goType(v) === '' ? null : (v as GoValue);
}

/** A slice field as an array (a nil slice is empty). */
function items(node: GoValue, name: string): GoValue[] {
  const v = field(node, name) as { constructor?: { string?: unknown }; $array?: unknown; $offset?: unknown; $length?: unknown };
  const t = v?.constructor?.string;
  if (typeof t !== 'string' || !t.startsWith('[]')) throw new Unsafe('shell AST layout not recognised');
  const len = v.$length;
  if (len === 0) return [];
  if (!Array.isArray(v.$array) || typeof v.$offset !== 'number' || typeof len !== 'number') {
    throw new Unsafe('shell AST layout not recognised');
  }
  return (v.$array as GoValue[]).slice(v.$offset, v.$offset + len);
}

function text(node: GoValue, name: string): string {
  const v = field(node, name);
  if (typeof v !== 'string') throw new Unsafe('shell AST layout not recognised');
  // eslint-disable-next-line no-control-regex -- detecting non-ASCII bytes
  return /[^\x00-\x7f]/.test(v) ? Buffer.from(v, 'latin1').toString('utf8') : v;
}

function flag(node: GoValue, name: string): boolean {
  const v = field(node, name);
  if (typeof v !== 'boolean') throw new Unsafe('shell AST layout not recognised');
  return v;
}

interface Ops {
  rdrIn: number; // <
  rdrOut: number; // >
  appOut: number; // >>
  clbOut: number; // >|
  rdrAll: number; // &>
  appAll: number; // &>>
  rdrInOut: number; // <>
  hdoc: number; // <<
  dashHdoc: number; // <<-
  wordHdoc: number; // <<<
  dplOut: number; // >&
  dplIn: number; // <&
}

interface Lib {
  parse(src: string): GoValue;
  ops: Ops;
  /** Set when the self-test failed: nothing is read-only. */
  broken?: string;
}

let cached: Lib | undefined;
let loading: Promise<void> | undefined;

/**
 * Load the shell parser (mvdan-sh, ~1.5 MB) so `classifyCommand` can analyse commands. It is
 * loaded only when needed: `runTurn` awaits this when a tool of kind `execute` may need its
 * command classified; call it yourself before using `classifyCommand`, `isSafeCall` or
 * `classifyCall` directly on shell commands. Until it has loaded, `classifyCommand` answers "not
 * read-only" (fail closed) and starts loading. A dynamic `import()`, so ESM builds and bundlers
 * keep it out of the entry chunk. Never rejects (a failed load makes nothing read-only).
 */
export function loadShellParser(): Promise<void> {
  if (cached) return Promise.resolve();
  loading ??= import('mvdan-sh').then(
    (mod) => {
      // CommonJS GopherJS bundle: Node's ESM loader and bundlers put module.exports on `default`.
      const m = mod as { syntax?: ShSyntax; default?: { syntax?: ShSyntax } };
      const syntax = m.syntax ?? m.default?.syntax;
      cached = syntax ? build(syntax) : { parse: () => unsafe('shell parser unavailable'), ops: {} as Ops, broken: 'shell parser unavailable' };
    },
    () => {
      cached = { parse: () => unsafe('shell parser unavailable'), ops: {} as Ops, broken: 'shell parser unavailable' };
    },
  );
  return loading;
}

/** Has the shell parser loaded (`classifyCommand` can analyse commands)? */
export function shellParserLoaded(): boolean {
  return cached !== undefined;
}

function build(syntax: ShSyntax): Lib {
  const parser = syntax.NewParser();
  const parse = (src: string): GoValue => parser.Parse(src, 'cmd').__internal_object__ as GoValue;
  const l: Lib = { parse, ops: {} as Ops };
  try {
    // Operator codes are Go token constants; read them from the parser instead of hard-coding.
    const opOf = (src: string): number => {
      const op = field(items(items(parse(src), 'Stmts')[0], 'Redirs')[0], 'Op');
      if (typeof op !== 'number') throw new Error('op');
      return op;
    };
    l.ops = {
      rdrIn: opOf('a < f'),
      rdrOut: opOf('a > f'),
      appOut: opOf('a >> f'),
      clbOut: opOf('a >| f'),
      rdrAll: opOf('a &> f'),
      appAll: opOf('a &>> f'),
      rdrInOut: opOf('a <> f'),
      hdoc: opOf('a <<E\nx\nE\n'),
      dashHdoc: opOf('a <<-E\nx\nE\n'),
      wordHdoc: opOf('a <<< w'),
      dplOut: opOf('a >& 2'),
      dplIn: opOf('a <& 0'),
    };
    if (new Set(Object.values(l.ops)).size !== Object.keys(l.ops).length) throw new Error('ops');
    selfTest(l);
  } catch {
    l.broken = 'shell parser self-test failed';
  }
  return l;
}

/** Known answers that exercise every accessor; any mismatch disables the classifier. */
function selfTest(l: Lib): void {
  const cases: Array<[string, boolean]> = [
    ['ls -l "a b" | grep -v \'x\' 2>/dev/null', true],
    ['ls > f', false],
    ['ls 2>&1 >> f', false],
    ['echo "$(rm x)"', false],
    ['echo ${x:-$(rm x)}', false],
    ['cat <<E\n$(rm x)\nE\n', false],
    ['if true; then ls; else rm x; fi', false],
    ['FOO=1 ls', false],
    ['ls &', false],
    ['l\\s', true],
  ];
  for (const [cmd, expected] of cases) {
    if (analyse(l, cmd).readOnly !== expected) throw new Error('self-test');
  }
}

// ---------------------------------------------------------------------------------------------
// Public API

export interface CommandClassification {
  readOnly: boolean;
  /** Why; names programs and flags, never whole arguments. */
  reason: string;
}

/** Commands longer than this are not analysed (not read-only). */
export const MAX_COMMAND_LENGTH = 20_000;

/** Classify a shell command (bash syntax). Never throws. */
export function classifyCommand(cmd: unknown): CommandClassification {
  if (typeof cmd !== 'string') return no('command is not a string');
  if (cmd.trim() === '') return no('empty command');
  if (cmd.length > MAX_COMMAND_LENGTH) return no(`command longer than ${MAX_COMMAND_LENGTH} characters`);
  const l = cached;
  if (!l) {
    void loadShellParser();
    return no('shell parser not loaded yet (await loadShellParser() first)');
  }
  if (l.broken) return no(l.broken);
  return analyse(l, cmd);
}

function analyse(l: Lib, cmd: string): CommandClassification {
  let file: GoValue;
  try {
    file = l.parse(cmd);
  } catch (err) {
    return no(`parse error${parsePosition(err)}`);
  }
  try {
    prePass(file);
    const programs: string[] = [];
    new Checker(l.ops, programs).stmts(items(file, 'Stmts'));
    if (programs.length === 0) return no('no command');
    return { readOnly: true, reason: `read-only: ${[...new Set(programs)].join(', ')}` };
  } catch (err) {
    if (err instanceof Unsafe) return no(err.message);
    return no('not analysable');
  }
}

/** Convenience: `classifyCommand(cmd).readOnly`. */
export function isReadOnlyCommand(cmd: unknown): boolean {
  return classifyCommand(cmd).readOnly;
}

function no(reason: string): CommandClassification {
  return { readOnly: false, reason };
}


function unsafe(reason: string): never {
  throw new Unsafe(reason);
}

function parsePosition(err: unknown): string {
  const pos = (err as { Pos?: { Line?: () => number; Col?: () => number } } | null)?.Pos;
  try {
    const line = pos?.Line?.();
    const col = pos?.Col?.();
    if (typeof line === 'number' && typeof col === 'number' && line > 0) return ` at ${line}:${col}`;
  } catch {
    // fall through: position is optional
  }
  return '';
}

// ---------------------------------------------------------------------------------------------
// Pass 1: node types that are never read-only, wherever they appear (also inside words,
// heredoc bodies and parameter expansions).

const FORBIDDEN_NODES: Record<string, string> = {
  CmdSubst: 'command substitution',
  ProcSubst: 'process substitution',
  ArithmExp: 'arithmetic expansion',
  ArithmCmd: 'arithmetic command',
  LetClause: 'let',
  FuncDecl: 'function definition',
  CoprocClause: 'coprocess',
  DeclClause: 'declaration builtin (declare/local/export/readonly/typeset)',
  TestClause: '[[ ]] (its -eq/-lt operands are evaluated as arithmetic; use [ or test)',
  ForClause: 'loop',
  WhileClause: 'loop',
  CaseClause: 'case statement',
  TestDecl: 'test declaration',
};

/** Visits every syntax node reachable through any field (not only the ones pass 2 reads). */
function prePass(node: unknown, depth = 0): void {
  if (node === null || typeof node !== 'object') return;
  if (depth > 2000) unsafe('command nested too deeply');
  const t = goType(node);
  if (t.startsWith('[]')) {
    const v = node as { $array?: unknown; $offset?: number; $length?: number };
    if (!v.$length) return;
    if (!Array.isArray(v.$array)) return; // byte slices etc. are typed arrays: no nodes inside
    for (let i = 0; i < v.$length; i++) prePass(v.$array[(v.$offset ?? 0) + i], depth + 1);
    return;
  }
  const ctorName = (node as GoValue).constructor?.string;
  if (typeof ctorName !== 'string' || !ctorName.startsWith('*syntax.') || t === '') return; // nil, values (Pos, Comment)
  const why = FORBIDDEN_NODES[t];
  if (why) unsafe(why);
  for (const key of Object.keys(node)) {
    if (key === '$val') continue;
    const v = (node as GoValue)[key];
    if (v !== null && typeof v === 'object') prePass(v, depth + 1);
  }
}

// ---------------------------------------------------------------------------------------------
// Pass 2: structural walk over the constructs we understand.

/** An argument's value after quote removal, or null when it depends on expansion (variables, globs, braces). */
type Arg = string | null;

/** Redirection targets that are not files. */
const DEVICE_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);

/**
 * `NAME=value cmd` prefixes allowed (static values only): locale, time zone and display
 * settings. Anything else can change what a read-only program does (LD_PRELOAD, PATH,
 * GIT_EXTERNAL_DIFF, PAGER, BASH_ENV, …). PAGER/GIT_PAGER are allowed only as `cat` or empty.
 */
const ENV_ALLOW = /^(LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|CLICOLOR|COLUMNS|LINES)$/;
const PAGER_VARS = new Set(['PAGER', 'GIT_PAGER', 'MANPAGER']);

class Checker {
  constructor(
    private readonly ops: Ops,
    private readonly programs: string[],
  ) {}

  stmts(list: GoValue[]): void {
    for (const st of list) this.stmt(st);
  }

  stmt(st: GoValue | null): void {
    if (!st) return;
    if (goType(st) !== 'Stmt') unsafe('shell AST layout not recognised');
    if (flag(st, 'Background')) unsafe('background job (&)');
    if (flag(st, 'Coprocess')) unsafe('coprocess');
    const redirs = items(st, 'Redirs');
    for (const r of redirs) this.redirect(r);
    const cmd = child(st, 'Cmd');
    if (!cmd) {
      if (redirs.length === 0) unsafe('empty statement');
      return;
    }
    this.command(cmd);
  }

  private command(cmd: GoValue): void {
    const t = goType(cmd);
    switch (t) {
      case 'CallExpr':
        return this.call(cmd);
      case 'BinaryCmd': // && || | |&
        this.stmt(child(cmd, 'X'));
        this.stmt(child(cmd, 'Y'));
        return;
      case 'Subshell':
      case 'Block':
        return this.stmts(items(cmd, 'Stmts'));
      case 'IfClause': {
        let clause: GoValue | null = cmd;
        while (clause) {
          this.stmts(items(clause, 'Cond'));
          this.stmts(items(clause, 'Then'));
          clause = child(clause, 'Else');
        }
        return;
      }
      case 'TimeClause':
        return this.stmt(child(cmd, 'Stmt'));
      default:
        unsafe(`${t || 'unknown construct'} is not analysed`);
    }
  }

  private redirect(r: GoValue): void {
    const op = field(r, 'Op');
    const o = this.ops;
    const n = child(r, 'N');
    if (n && !/^\d+$/.test(text(n, 'Value'))) unsafe('redirection to a named file descriptor');
    const word = child(r, 'Word');
    if (op === o.hdoc || op === o.dashHdoc) {
      // Body: quoted delimiter → literal; unquoted → expansions, already screened by pass 1.
      const body = child(r, 'Hdoc');
      if (body) this.word(body);
      return;
    }
    const target = word ? this.word(word) : null;
    if (op === o.wordHdoc) return; // a here-string
    if (op === o.rdrIn) {
      // Reading a file. bash's /dev/tcp and /dev/udp redirections open network connections.
      if (target === null) unsafe('input redirection from an expanded path');
      if (/^\/dev\/(tcp|udp)\//.test(target)) unsafe('network redirection (/dev/tcp, /dev/udp)');
      return;
    }
    if (op === o.dplOut || op === o.dplIn) {
      // n>&m, n<&m, n>&- duplicate/close descriptors; `>&file` writes a file.
      if (target !== null && /^(\d+|-)$/.test(target)) return;
      unsafe('redirection >& to a file');
    }
    if (op === o.rdrOut || op === o.appOut || op === o.clbOut || op === o.rdrAll || op === o.appAll) {
      if (target !== null && DEVICE_TARGETS.has(target)) return;
      unsafe('output redirection to a file');
    }
    if (op === o.rdrInOut) unsafe('read-write redirection (<>)');
    unsafe('unknown redirection');
  }

  private call(call: GoValue): void {
    const assigns = items(call, 'Assigns');
    const words = items(call, 'Args');
    if (words.length === 0) unsafe('variable assignment');
    for (const a of assigns) this.assignment(a);
    const args = words.map((w) => this.word(w));
    const name = args[0];
    if (name === null) unsafe('command name is not a literal');
    if (name.includes('/')) unsafe('path-qualified program (only bare allow-listed names are trusted)');
    if (WRAPPERS.has(name)) unsafe(`${name} runs another command`);
    const rule = RULES.get(name);
    if (!rule) unsafe(`unknown command ${printable(name)}`);
    const why = rule(args.slice(1));
    if (why) unsafe(`${name}: ${why}`);
    this.programs.push(name);
  }

  private assignment(a: GoValue): void {
    const nameNode = child(a, 'Name');
    const name = nameNode ? text(nameNode, 'Value') : '';
    if (flag(a, 'Append') || flag(a, 'Naked') || child(a, 'Index') || child(a, 'Array')) {
      unsafe('environment assignment before a command');
    }
    const valueNode = child(a, 'Value');
    const value = valueNode ? this.word(valueNode) : '';
    if (ENV_ALLOW.test(name) && value !== null) return;
    if (PAGER_VARS.has(name) && (value === 'cat' || value === '')) return;
    unsafe(`environment assignment ${printable(name)}=… before a command`);
  }

  /** Quote-removed value of a word, or null when it depends on expansion. Throws on constructs not analysed. */
  word(w: GoValue): Arg {
    if (goType(w) !== 'Word') unsafe('shell AST layout not recognised');
    let out = '';
    let dynamic = false;
    for (const part of items(w, 'Parts')) {
      const t = goType(part);
      switch (t) {
        case 'Lit': {
          const v = unquotedLit(text(part, 'Value'));
          if (v === null) dynamic = true;
          else out += v;
          break;
        }
        case 'SglQuoted':
          if (flag(part, 'Dollar')) dynamic = true; // $'…' ANSI-C escapes: not decoded, treated as unknown
          else out += text(part, 'Value');
          break;
        case 'DblQuoted': {
          if (flag(part, 'Dollar')) dynamic = true; // $"…" locale translation
          for (const inner of items(part, 'Parts')) {
            const it = goType(inner);
            if (it === 'Lit') out += dquoteLit(text(inner, 'Value'));
            else if (it === 'ParamExp') {
              this.paramExp(inner);
              dynamic = true;
            } else unsafe(`${it || 'unknown construct'} inside double quotes is not analysed`);
          }
          break;
        }
        case 'ParamExp':
          this.paramExp(part);
          dynamic = true;
          break;
        case 'ExtGlob':
        case 'BraceExp':
          dynamic = true;
          break;
        default:
          unsafe(`${t || 'unknown construct'} is not analysed`);
      }
    }
    return dynamic ? null : out;
  }

  /** Only plain reads: $x ${x} ${#x} ${!x} $1 $@ … (no operators, indices, slices, replacements). */
  private paramExp(p: GoValue): void {
    for (const f of ['Index', 'Slice', 'Repl', 'Exp']) {
      if (child(p, f)) unsafe('parameter expansion operator');
    }
    const names = field(p, 'Names');
    if (names !== 0) unsafe('parameter expansion operator');
  }
}

/**
 * Unquoted literal → value after backslash removal, or null when the shell may expand it:
 * `*` or `?`, a `[` with a later `]` (bracket glob), a `{` with a later `,` or `..` (brace
 * expansion). A lone `[` (the test command) or `{}` (find's placeholder) stays literal.
 */
function unquotedLit(raw: string): string | null {
  let out = '';
  let openBracket = false;
  let openBrace = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '\\') {
      if (i + 1 < raw.length) {
        if (raw[i + 1] !== '\n') out += raw[i + 1];
        i++;
      }
      continue;
    }
    if (c === '*' || c === '?') return null;
    if (c === '[') openBracket = true;
    else if (c === ']' && openBracket) return null;
    else if (c === '{') openBrace = true;
    else if (openBrace && (c === ',' || (c === '.' && raw[i + 1] === '.'))) return null;
    out += c;
  }
  return out;
}

/** Literal inside double quotes: backslash escapes only $ ` " \ and newline. */
function dquoteLit(raw: string): string {
  return raw.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
}

function printable(s: string): string {
  const clean = s.replace(/[^\w.+-]/g, '?');
  return clean.length > 40 ? `${clean.slice(0, 40)}…` : clean;
}

// ---------------------------------------------------------------------------------------------
// Program rules. A rule gets the arguments after the program name (null = not static) and
// returns null when read-only, or the reason why not.

type Rule = (args: Arg[]) => string | null;

/** Programs that run another command (never read-only, whatever they run). */
const WRAPPERS = new Set([
  'bash', 'sh', 'zsh', 'dash', 'ksh', 'fish', 'eval', 'exec', 'source', '.', 'xargs', 'env', 'sudo', 'doas', 'su',
  'nohup', 'timeout', 'nice', 'ionice', 'time', 'command', 'builtin', 'watch', 'parallel', 'script', 'strace', 'stdbuf',
  'chroot', 'flock', 'setsid', 'unbuffer', 'trap',
]);

/** No flag of these programs writes files or runs programs; expansions in arguments are fine. */
const anyArgs: Rule = () => null;

/** Every argument must be static (a glob or variable could expand to a dangerous flag). */
function staticOnly(check: (args: string[]) => string | null = () => null): Rule {
  return (args) => {
    if (args.some((a) => a === null)) return 'arguments with expansions (variables/globs) are not allowed for this program';
    return check(args as string[]);
  };
}

interface Opt {
  /** Short letter, or long name without dashes. */
  name: string;
  long: boolean;
  value?: string;
}

interface OptSpec {
  /** Short options that take an argument. */
  shortArg?: string;
  /** Long options that take an argument (GNU abbreviations are resolved by prefix). */
  longArg?: string[];
  /** Stop at the first operand (POSIX); GNU tools permute by default. */
  posix?: boolean;
}

/** getopt_long-style scan. */
function getopt(args: string[], spec: OptSpec): { opts: Opt[]; operands: string[] } {
  const opts: Opt[] = [];
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
      if (eq >= 0) opts.push({ name, long: true, value: a.slice(eq + 1) });
      else if ((spec.longArg ?? []).some((l) => l.startsWith(name))) {
        opts.push({ name, long: true, value: args[i + 1] });
        i++;
      } else opts.push({ name, long: true });
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const letter = a[j];
        if ((spec.shortArg ?? '').includes(letter)) {
          const rest = a.slice(j + 1);
          if (rest) opts.push({ name: letter, long: false, value: rest });
          else {
            opts.push({ name: letter, long: false, value: args[i + 1] });
            i++;
          }
          break;
        }
        opts.push({ name: letter, long: false });
      }
      continue;
    }
    operands.push(a);
    if (spec.posix) {
      operands.push(...args.slice(i + 1));
      break;
    }
  }
  return { opts, operands };
}

/** Is `given` (a possibly abbreviated long option) one of `full`? */
function isLong(o: Opt, ...full: string[]): boolean {
  return o.long && o.name.length > 0 && full.some((f) => f.startsWith(o.name));
}

function denyOpts(opts: Opt[], short: string, long: string[]): string | null {
  for (const o of opts) {
    if (!o.long && short.includes(o.name)) return `option -${o.name}`;
    if (long.length && isLong(o, ...long)) return `option --${o.name}`;
  }
  return null;
}

const FIND_DENY = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls']);

const RULES = new Map<string, Rule>();
for (const name of [
  'ls', 'cat', 'head', 'tail', 'wc', 'echo', 'pwd', 'stat', 'du', 'df', 'basename', 'dirname', 'realpath',
  'readlink', 'true', 'false', ':', 'test', '[', 'grep', 'egrep', 'fgrep', 'cut', 'tr', 'nl', 'tac', 'rev',
  'diff', 'cmp', 'comm', 'which', 'whoami', 'id', 'groups', 'uname', 'nproc', 'arch', 'printenv', 'sleep', 'seq',
  'md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum', 'cksum', 'strings', 'od',
  'column', 'fold', 'fmt', 'expand', 'unexpand', 'paste', 'jq', 'cd', 'type', 'uptime', 'locale', 'hexdump',
  'look', 'numfmt', 'shasum', 'tty', 'lsof', 'ps', 'free',
]) {
  RULES.set(name, anyArgs);
}

RULES.set('printf', staticOnly((args) => {
  // bash builtin: `printf -v VAR` assigns a shell variable (could be PATH).
  for (const a of args) {
    if (a === '--' || !a.startsWith('-')) break;
    if (a.startsWith('-v')) return 'option -v assigns a variable';
  }
  return null;
}));

RULES.set('date', staticOnly((args) => {
  const { opts, operands } = getopt(args, { shortArg: 'dfrs', longArg: ['date', 'file', 'reference', 'set', 'rfc-3339'] });
  const deny = denyOpts(opts, 's', ['set']);
  if (deny) return `${deny} sets the clock`;
  if (operands.some((o) => !o.startsWith('+'))) return 'an operand without + sets the clock';
  return null;
}));

RULES.set('sort', staticOnly((args) => {
  const { opts } = getopt(args, {
    shortArg: 'kotST',
    longArg: ['key', 'output', 'field-separator', 'buffer-size', 'temporary-directory', 'compress-program', 'parallel', 'random-source', 'batch-size', 'files0-from', 'sort'],
  });
  return denyOpts(opts, 'o', ['output', 'compress-program']);
}));

RULES.set('uniq', staticOnly((args) => {
  const { operands } = getopt(args, { shortArg: 'fsw', longArg: ['skip-fields', 'skip-chars', 'check-chars', 'all-repeated', 'group'] });
  return operands.length > 1 ? 'a second operand is an output file' : null;
}));

RULES.set('tree', staticOnly((args) => {
  const { opts } = getopt(args, { shortArg: 'LPIoHT', longArg: ['charset', 'filelimit', 'timefmt', 'sort', 'fromfile', 'output'] });
  return denyOpts(opts, 'oR', ['output']);
}));

RULES.set('file', staticOnly((args) => {
  const { opts } = getopt(args, { shortArg: 'eFfmP', longArg: ['exclude', 'separator', 'files-from', 'magic-file', 'parameter'] });
  return denyOpts(opts, 'C', ['compile']);
}));

RULES.set('find', staticOnly((args) => {
  for (const a of args) if (FIND_DENY.has(a)) return `${a} runs or writes`;
  return null;
}));

RULES.set('rg', staticOnly((args) => {
  for (const a of args) {
    if (a === '--') break;
    if (a === '--pre' || a.startsWith('--pre=') || a.startsWith('--pre-glob')) return 'option --pre runs a program';
  }
  return null;
}));

RULES.set('sed', staticOnly(checkSed));
for (const awk of ['awk', 'gawk', 'mawk', 'nawk']) RULES.set(awk, staticOnly(checkAwk));
RULES.set('git', staticOnly(checkGit));

// ---------------------------------------------------------------------------------------------
// sed

function checkSed(args: string[]): string | null {
  // GNU sed: -e SCRIPT, -f FILE, -l N take an argument; -i[SUFFIX] is refused outright.
  const { opts, operands } = getopt(args, { shortArg: 'efl', longArg: ['expression', 'file', 'line-length'] });
  const scripts: string[] = [];
  let sandbox = false;
  for (const o of opts) {
    if (o.long && o.name === 'sandbox') sandbox = true;
    if ((!o.long && o.name === 'i') || isLong(o, 'in-place')) return 'option -i edits files in place';
    if ((!o.long && o.name === 'f') || isLong(o, 'file')) return 'option -f reads a script that is not visible';
    if ((!o.long && o.name === 'e') || isLong(o, 'expression')) {
      if (o.value === undefined) return 'option -e without a script';
      scripts.push(o.value);
    }
  }
  if (scripts.length === 0) {
    if (operands.length === 0) return 'no script';
    scripts.push(operands[0]);
  }
  if (sandbox) return null; // GNU --sandbox rejects e/w/r commands itself
  for (const s of scripts) {
    const why = sedScriptProblem(s);
    if (why) return why;
  }
  return null;
}

/**
 * Scan a sed script for commands that write files or run programs (w, W, e, s///w, s///e).
 * Anything the scanner does not understand is a problem (fail closed).
 */
export function sedScriptProblem(script: string): string | null {
  let i = 0;
  const n = script.length;
  const at = (k: number): string => script[k] ?? '';
  const skipTo = (stops: string): void => {
    while (i < n && !stops.includes(script[i])) i++;
  };
  /** Delimited text (regex or replacement). Returns false when unterminated or ambiguous. */
  const delimited = (delim: string): boolean => {
    let inBracket = false;
    while (i < n) {
      const c = script[i];
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === '\n' && delim !== '\n') return false;
      if (c === '[' && !inBracket) inBracket = true;
      else if (c === ']' && inBracket) inBracket = false;
      if (c === delim) {
        // GNU sed ends here even inside [...]; BSD sed does not: refuse the ambiguity.
        if (inBracket) return false;
        i++;
        return true;
      }
      i++;
    }
    return false;
  };
  const address = (): boolean => {
    const c = at(i);
    if (/\d/.test(c)) {
      while (/\d/.test(at(i))) i++;
      if (at(i) === '~') {
        i++;
        while (/\d/.test(at(i))) i++;
      }
      return true;
    }
    if (c === '$') {
      i++;
      return true;
    }
    if (c === '/' || c === '\\') {
      let delim = '/';
      if (c === '\\') {
        delim = at(i + 1);
        if (!delim || delim === '\n') return false;
        i++;
      }
      i++;
      if (!delimited(delim)) return false;
      while (at(i) === 'I' || at(i) === 'M') i++;
      return true;
    }
    return true; // no address
  };

  while (i < n) {
    const c = script[i];
    if (' \t\n;'.includes(c)) {
      i++;
      continue;
    }
    if (c === '#') {
      skipTo('\n');
      continue;
    }
    if (c === '}') {
      i++;
      continue;
    }
    const before = i;
    if (!address()) return 'sed script not understood';
    if (i > before && at(i) === ',') {
      i++;
      if (at(i) === '+' || at(i) === '~') {
        i++;
        while (/\d/.test(at(i))) i++;
      } else if (!address()) return 'sed script not understood';
    }
    while (at(i) === ' ' || at(i) === '\t' || at(i) === '!') i++;
    const cmd = at(i);
    i++;
    if (cmd === '{') continue; // a block: commands follow directly
    switch (cmd) {
      case '=':
      case 'd':
      case 'D':
      case 'g':
      case 'G':
      case 'h':
      case 'H':
      case 'x':
      case 'n':
      case 'N':
      case 'p':
      case 'P':
      case 'z':
      case 'F':
        break;
      case 'l':
      case 'L':
      case 'q':
      case 'Q':
        while (at(i) === ' ') i++;
        while (/\d/.test(at(i))) i++;
        break;
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'v':
        skipTo(';\n');
        break;
      case 'a':
      case 'i':
      case 'c':
      case 'r':
      case 'R':
        // text or a file to read: to the end of the line (backslash-newline continues)
        while (i < n && script[i] !== '\n') i += script[i] === '\\' ? 2 : 1;
        break;
      case 'w':
      case 'W':
        return 'sed command w writes a file';
      case 'e':
        return 'sed command e runs a program';
      case 'y': {
        const d = at(i);
        if (!d || d === '\\' || d === '\n') return 'sed script not understood';
        i++;
        if (!delimited(d) || !delimited(d)) return 'sed script not understood';
        break;
      }
      case 's': {
        const d = at(i);
        if (!d || d === '\\' || d === '\n') return 'sed script not understood';
        i++;
        if (!delimited(d) || !delimited(d)) return 'sed script not understood';
        while (i < n && !' \t\n;}#'.includes(script[i])) {
          const f = script[i];
          if (f === 'w') return 'sed s///w writes a file';
          if (f === 'e') return 'sed s///e runs a program';
          if (!/[gpiImM0-9]/.test(f)) return 'sed script not understood';
          i++;
        }
        break;
      }
      default:
        return 'sed script not understood';
    }
    while (at(i) === ' ' || at(i) === '\t') i++;
    if (i < n && !';\n}#'.includes(script[i])) return 'sed script not understood';
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// awk: allowed only without program files, extensions, output redirection, pipes and system().

const AWK_FORBIDDEN = ['system', 'getline', '|', '>', '@', 'close', 'fflush'];

function checkAwk(args: string[]): string | null {
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      i++;
      break;
    }
    if (!a.startsWith('-') || a === '-') break;
    if (a === '-F' || a === '-v') {
      i++;
      continue;
    }
    if (a.startsWith('-F') || a.startsWith('-v')) continue;
    return `option ${a.startsWith('--') ? a.split('=')[0] : a.slice(0, 2)} is not allowed`;
  }
  const program = args[i];
  if (program === undefined) return 'no program';
  for (const token of AWK_FORBIDDEN) {
    if (program.includes(token)) return `program contains ${token} (may write files or run commands)`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// git

const GIT_READ_ONLY = new Set([
  'status', 'log', 'show', 'diff', 'blame', 'annotate', 'shortlog', 'ls-files', 'ls-tree', 'rev-parse', 'rev-list',
  'describe', 'cat-file', 'show-ref', 'grep', 'merge-base', 'name-rev', 'for-each-ref', 'count-objects',
  'whatchanged', 'range-diff', 'diff-tree', 'diff-files', 'diff-index', 'cherry', 'show-branch', 'check-ignore',
  'check-attr', 'version', 'var', 'verify-pack',
]);

const GIT_GLOBAL_FLAGS = new Set([
  '--no-pager', '-P', '--no-optional-locks', '--literal-pathspecs', '--glob-pathspecs', '--noglob-pathspecs',
  '--icase-pathspecs', '--no-replace-objects',
]);

function checkGit(args: string[]): string | null {
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('-')) break;
    if (a === '-C') {
      i++;
      continue;
    }
    if (a === '--version' || a === '--help') return null;
    if (GIT_GLOBAL_FLAGS.has(a)) continue;
    if (a === '-c' || a.startsWith('--config-env')) return 'option -c/--config-env can make git run programs';
    return `global option ${a.split('=')[0]} is not allowed`;
  }
  const sub = args[i];
  if (sub === undefined) return null; // prints usage
  const rest = args.slice(i + 1);
  for (const a of rest) {
    if (a === '--') break;
    const name = a.startsWith('--') ? a.slice(2).split('=')[0] : '';
    if (name && ('output'.startsWith(name) || name.startsWith('output'))) return 'option --output writes a file';
    if (sub === 'grep' && (a.startsWith('-O') || (name && 'open-files-in-pager'.startsWith(name)))) {
      return 'option --open-files-in-pager runs a program';
    }
  }
  if (GIT_READ_ONLY.has(sub)) return null;
  switch (sub) {
    case 'branch':
      return gitListing(rest, 'branch', ['--show-current']);
    case 'tag':
      return gitListing(rest, 'tag', []);
    case 'remote':
      if (rest.length === 0 || rest.every((a) => a === '-v' || a === '--verbose')) return null;
      if (rest[0] === 'get-url') return null;
      return `git remote ${printable(rest[0])} is not read-only`;
    case 'stash':
      return rest[0] === 'list' || rest[0] === 'show' ? null : 'git stash without list/show changes the stash';
    case 'worktree':
      return rest[0] === 'list' ? null : 'git worktree without list changes worktrees';
    case 'reflog':
      return rest[0] === undefined || rest[0] === 'show' || !['expire', 'delete', 'drop', 'write'].includes(rest[0])
        ? null
        : `git reflog ${rest[0]} changes the reflog`;
    case 'config':
      return gitConfig(rest);
    default:
      return `git ${printable(sub)} is not a known read-only subcommand`;
  }
}

const GIT_LIST_FLAGS = new Set([
  '-a', '--all', '-r', '--remotes', '-v', '-vv', '--verbose', '-q', '--quiet', '-i', '--ignore-case', '--column',
  '--no-column', '--no-color', '--color', '-l', '--list', '--omit-empty',
]);
const GIT_LIST_ARG_FLAGS = new Set(['--contains', '--no-contains', '--merged', '--no-merged', '--points-at', '--sort', '--format']);

/** git branch / git tag: read-only only as a listing. */
function gitListing(rest: string[], sub: string, extra: string[]): string | null {
  let listing = false;
  const operands: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    const flag = a.split('=')[0];
    if (a === '-l' || a === '--list') listing = true;
    if (extra.includes(a)) return null;
    if (GIT_LIST_FLAGS.has(a) || /^--(color|column|abbrev)=/.test(a) || /^-n\d*$/.test(a)) continue;
    if (GIT_LIST_ARG_FLAGS.has(flag)) {
      if (!a.includes('=')) i++;
      continue;
    }
    if (a.startsWith('-')) return `git ${sub} option ${flag} is not a listing option`;
    operands.push(a);
  }
  if (operands.length > 0 && !listing) return `git ${sub} with a name creates a ${sub}`;
  return null;
}

function gitConfig(rest: string[]): string | null {
  const first = rest.find((a) => !a.startsWith('-'));
  const flags = rest.filter((a) => a.startsWith('-'));
  const write = ['--unset', '--unset-all', '--add', '--replace-all', '--edit', '-e', '--rename-section', '--remove-section'];
  if (flags.some((f) => write.includes(f.split('=')[0]))) return 'git config write option';
  if (first === 'get' || first === 'list') return null;
  const read = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list', '-l', '--get-color', '--get-colorbool'];
  if (flags.some((f) => read.includes(f))) return null;
  return 'git config without --get/--list may write';
}

/** The allow-listed program names (for docs and tests). */
export function readOnlyPrograms(): string[] {
  return [...RULES.keys()].sort();
}
