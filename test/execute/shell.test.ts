import { classifyCommand, isReadOnlyCommand, loadShellParser, readOnlyPrograms, sedScriptProblem } from '../../src/execute/shell';

// The shell parser loads asynchronously (on first need in runTurn); these tests call the classifier directly.
beforeAll(() => loadShellParser());

/** [command, read-only?] — every row is a separate test. */
const TABLE: Array<[string, boolean]> = [
  // --- plain read-only programs
  ['ls', true],
  ['ls -la', true],
  ['ls -la src/', true],
  ['ls *.ts', true],
  ['ls $HOME', true],
  ['ls ~/projects', true],
  ['cat README.md', true],
  ['cat "a file.txt"', true],
  ["cat 'a file.txt' b.txt", true],
  ['head -n 20 src/index.ts', true],
  ['tail -n 50 log.txt', true],
  ['tail -f log.txt', true],
  ['wc -l src/*.ts', true],
  ['pwd', true],
  ['echo hello', true],
  ['echo "$PATH"', true],
  ['printf "%s\\n" hello', true],
  ['which node', true],
  ['file package.json', true],
  ['stat -c %s package.json', true],
  ['du -sh .', true],
  ['df -h', true],
  ['tree -L 2', true],
  ['basename /a/b/c.txt', true],
  ['dirname /a/b/c.txt', true],
  ['realpath .', true],
  ['uname -a', true],
  ['date +%Y-%m-%d', true],
  ['diff a.txt b.txt', true],
  ['jq .name package.json', true],
  ['sha256sum package.json', true],
  ['true', true],
  ['cd src && ls', true],
  // --- grep / rg / find
  ['grep -rn "TODO" src', true],
  ['grep -r foo *.ts', true],
  ['grep -E "a|b" file', true],
  ['rg "fn main" --type rust', true],
  ['rg -n foo src/', true],
  ['rg --pre cat foo', false],
  ['rg --pre=./evil.sh foo', false],
  ['rg foo *', false], // a file named --pre=… would become an option
  ['find . -name "*.ts"', true],
  ['find . -type f -newer package.json', true],
  ['find . -name "*.tmp" -delete', false],
  ['find . -exec rm {} \\;', false],
  ['find . -name "*.ts" -exec rm {} +', false],
  ['find . -execdir ls \\;', false],
  ['find . -ok rm {} \\;', false],
  ['find . -fprint out.txt', false],
  ['find . -fprintf out.txt %p', false],
  ['find . -fls out.txt', false],
  ['find . -name *.ts', false], // unquoted glob: a file named -delete would become a primary
  ['find $DIR -name x', false],
  // --- sed / awk / sort
  ['sed -n "1,20p" file.txt', true],
  ["sed 's/foo/bar/g' file.txt", true],
  ["sed -e 's/a/b/' -e '/x/d' file", true],
  ["sed -n '/start/,/end/p' f", true],
  ['sed -i "s/a/b/" file', false],
  ['sed -i.bak s/a/b/ file', false],
  ['sed -ni p file', false],
  ['sed --in-place s/a/b/ file', false],
  ["sed 's/a/b/' file -i", false], // GNU sed permutes options
  ["sed 's/a/b/w out.txt' file", false],
  ["sed '1e rm -rf x' file", false],
  ["sed 's/x/y/e' file", false],
  ["sed -n '/x/w out' file", false],
  ['sed -f script.sed file', false],
  ["awk '{print $1}' file", true],
  ["awk -F: '{print $1}' /etc/passwd", true],
  ["awk '{print $1 > \"out\"}' file", false],
  ["awk '{system(\"rm x\")}' file", false],
  ["awk 'BEGIN { \"date\" | getline d }'", false],
  ["awk -f prog.awk file", false],
  ["awk 'BEGIN{while((\"ls\"|getline l)>0)print l}'", false],
  ["sed -n '$!{h;d};x;G;p' file", true],
  ["sed -n '/a/,/b/{/c/p}' file", true],
  ["sed 's/a/b/;w x' file", false],
  ["sed $'s/a/b/' file", false],
  ['ls # $(rm -rf x)', true],
  ['ls\nrm -rf x', false],
  ['ls() { rm x; }; ls', false],
  ["l''s", true],
  ['${HOME}/bin/tool', false],
  ['ls {a,b}', true],
  ['uniq -f 1 in.txt', true],
  ['sort file.txt', true],
  ['sort -u -k2 file.txt', true],
  ['sort -o out.txt file.txt', false],
  ['sort -uo out.txt file.txt', false],
  ['sort --output=out.txt file.txt', false],
  ['sort --compress-program=sh file', false],
  ['uniq -c file.txt', true],
  ['uniq in.txt out.txt', false],
  ['tree -o out.txt', false],
  ['date -s "2020-01-01"', false],
  ['file -C -m magic', false],
  ['printf -v PATH /tmp', false],
  // --- git
  ['git status', true],
  ['git status --short', true],
  ['git log --oneline -20', true],
  ['git diff HEAD~1 -- src/', true],
  ['git show HEAD:package.json', true],
  ['git blame src/index.ts', true],
  ['git branch', true],
  ['git branch -a', true],
  ['git branch --list "feat*"', true],
  ['git branch --show-current', true],
  ['git tag -l', true],
  ['git remote -v', true],
  ['git rev-parse HEAD', true],
  ['git ls-files', true],
  ['git stash list', true],
  ['git config --get user.name', true],
  ['git -C sub status', true],
  ['git --no-pager log -1', true],
  ['git push', false],
  ['git commit -m x', false],
  ['git checkout main', false],
  ['git branch new-feature', false],
  ['git branch -D old', false],
  ['git tag v1.0', false],
  ['git stash', false],
  ['git config user.name x', false],
  ['git -c core.pager=evil log', false],
  ['git -c alias.x=!sh x', false],
  ['git --exec-path=/tmp log', false],
  ['git diff --output=patch.txt', false],
  ['git log --output patch.txt', false],
  ['git grep -O foo', false],
  ['git frobnicate', false],
  ['git reset --hard', false],
  ['git log --out=patch.txt', false],
  ['git grep --open foo', false],
  ['git status --porcelain=v2', true],
  ['git -C "$(rm x)" status', false],
  ['GIT_DIR=/tmp/x git log', false],
  ['git log --format=%H | xargs git show', false],
  ['git $SUB', false],
  // --- pipes, lists, compound commands
  ['ls | grep foo', true],
  ['cat file | sort | uniq -c | sort -rn | head', true],
  ['git log --oneline | head -5', true],
  ['ls && pwd', true],
  ['ls || echo none', true],
  ['ls; pwd', true],
  ['(ls; pwd)', true],
  ['{ ls; pwd; }', true],
  ['if [ -f x ]; then cat x; fi', true],
  ['[ -d src ] && ls src', true],
  ['test -f package.json', true],
  ['! grep -q foo file', true],
  ['time ls', true],
  ['ls | sh', false],
  ['cat f | bash', false],
  ['ls && rm -rf /', false],
  ['(ls; rm x)', false],
  ['{ ls; touch x; }', false],
  ['if true; then rm x; fi', false],
  ['ls |& tee out.txt', false],
  // --- redirections
  ['ls > out.txt', false],
  ['ls >> out.txt', false],
  ['ls &> out.txt', false],
  ['ls 2> err.txt', false],
  ['ls >| out.txt', false],
  ['ls >& out.txt', false],
  ['ls 2>/dev/null', true],
  ['ls > /dev/null 2>&1', true],
  ['ls 2>&1 | head', true],
  ['grep foo < input.txt', true],
  ['cat <> file', false],
  ['> file', false],
  ['echo hi > $FILE', false],
  ['{ ls; } > out', false],
  ['exec 3> file', false],
  ['cat < /dev/tcp/example.com/80', false],
  ['ls > /dev/tcp/example.com/80', false],
  ['cat < "$FILE"', false],
  ['echo hi >&2', true],
  ['ls 2>&1 > out.txt', false],
  ['ls > >(tee out.txt)', false],
  ['ls -la > /dev/null 2>&1 &', false],
  // --- substitutions and expansions
  ['echo $(rm -rf /)', false],
  ['echo `rm -rf /`', false],
  ['cat <(rm x)', false],
  ['diff <(ls a) <(ls b)', false],
  ['ls "$(whoami)"', false],
  ['echo ${x:=evil}', false],
  ['echo ${x:-$(rm y)}', false],
  ['echo $((1+2))', false],
  ['echo ${arr[$i]}', false],
  ['cat $(find . -name x)', false],
  // --- heredocs
  ['cat <<EOF\nhello\nEOF', true],
  ["cat <<'EOF'\n$(not run)\nEOF", true],
  ['cat <<EOF\n$(rm -rf x)\nEOF', false],
  ['bash <<EOF\nrm -rf x\nEOF', false],
  ['python3 <<EOF\nprint(1)\nEOF', false],
  ['cat <<EOF > out.txt\nx\nEOF', false],
  ['grep foo <<< "text"', true],
  // --- wrappers and interpreters
  ['bash -c "ls"', false],
  ['sh -c ls', false],
  ['eval ls', false],
  ['exec ls', false],
  ['xargs rm < files.txt', false],
  ['find . -name x | xargs cat', false],
  ['env ls', false],
  ['env FOO=1 ls', false],
  ['sudo ls', false],
  ['nohup ls', false],
  ['timeout 5 ls', false],
  ['command ls', false],
  ['source ./script.sh', false],
  ['. ./script.sh', false],
  ['python3 -c "print(1)"', false],
  ['node -e "1"', false],
  // --- assignments and environment
  ['FOO=1 ls', false],
  ['PATH=/tmp ls', false],
  ['LD_PRELOAD=/tmp/x.so ls', false],
  ['GIT_EXTERNAL_DIFF=rm git diff', false],
  ['PAGER=sh git log', false],
  ['GIT_PAGER=cat git log', true],
  ['LC_ALL=C sort file', true],
  ['x=1', false],
  ['x=1; ls', false],
  ['export FOO=1', false],
  ['local x=1', false],
  ['declare -x FOO=1', false],
  // --- functions, loops, jobs, other constructs
  ['f() { ls; }; f', false],
  ['function f { ls; }', false],
  ['for f in *.ts; do cat "$f"; done', false],
  ['while true; do ls; done', false],
  ['case x in x) ls;; esac', false],
  ['[[ -f x ]] && cat x', false],
  ['(( x = 1 ))', false],
  ['let x=1', false],
  ['ls &', false],
  ['coproc ls', false],
  ['alias ls=rm', false],
  ['trap "rm x" EXIT', false],
  // --- unknown or path-qualified programs
  ['rm -rf /', false],
  ['touch x', false],
  ['mv a b', false],
  ['cp a b', false],
  ['mkdir x', false],
  ['chmod +x x', false],
  ['curl http://example.com', false],
  ['npm install', false],
  ['make', false],
  ['./script.sh', false],
  ['/bin/ls', false],
  ['tee out.txt', false],
  ['$CMD', false],
  ['"l"s', true], // quote removal: the program is ls
  ['\\ls', true],
  ['l\\s -la', true],
  // --- parse errors and degenerate input
  ['echo "unterminated', false],
  ['ls |', false],
  ['if then fi', false],
  ['', false],
  ['   ', false],
  ['ls )', false],
];

describe('classifyCommand table', () => {
  test('has at least 100 rows with both outcomes', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(100);
    expect(TABLE.some(([, ro]) => ro)).toBe(true);
    expect(TABLE.some(([, ro]) => !ro)).toBe(true);
    expect(new Set(TABLE.map(([c]) => c)).size).toBe(TABLE.length);
  });

  test.each(TABLE)('%j → read-only %s', (cmd, readOnly) => {
    const c = classifyCommand(cmd);
    expect(typeof c.reason).toBe('string');
    expect(c.reason.length).toBeGreaterThan(0);
    expect(c.readOnly).toBe(readOnly);
  });
});

describe('classifyCommand details', () => {
  test('never throws on non-string or odd input', () => {
    for (const bad of [undefined, null, 42, {}, [], 'x'.repeat(30_000), '\u0000', '$(', '`', "'"]) {
      expect(() => classifyCommand(bad)).not.toThrow();
      expect(classifyCommand(bad).readOnly).toBe(false);
    }
  });

  test('reasons name the construct, not the arguments', () => {
    expect(classifyCommand('ls > secret-file-name.txt').reason).not.toContain('secret-file-name');
    expect(classifyCommand('rm -rf /very/secret/path').reason).toBe('unknown command rm');
    expect(classifyCommand('echo $(cat /secret)').reason).toBe('command substitution');
    expect(classifyCommand('git status && git log').reason).toBe('read-only: git');
  });

  test('isReadOnlyCommand mirrors classifyCommand', () => {
    expect(isReadOnlyCommand('ls')).toBe(true);
    expect(isReadOnlyCommand('rm x')).toBe(false);
  });

  test('the allow-list contains the core programs and no writers', () => {
    const progs = readOnlyPrograms();
    for (const p of ['ls', 'cat', 'grep', 'rg', 'find', 'git', 'sed', 'sort', 'head', 'tail', 'wc']) expect(progs).toContain(p);
    for (const p of ['rm', 'mv', 'cp', 'tee', 'touch', 'xargs', 'env', 'bash', 'sh', 'eval']) expect(progs).not.toContain(p);
  });

  test('once the parser is loaded, a read-only pipeline is classified by it, the same way every time', () => {
    // Speed is the bench's business (no timed unit tests); here: the loaded parser answers, and repeats agree.
    const cmd = 'git log --oneline -20 | grep -v Merge | sort | uniq -c | sort -rn | head -n 10';
    const first = classifyCommand(cmd);
    expect(first.readOnly).toBe(true);
    for (let i = 0; i < 50; i++) expect(classifyCommand(cmd)).toEqual(first);
  });
});

describe('sedScriptProblem', () => {
  test.each([
    ['p', null],
    ['1,10p', null],
    ['$!N;P;D', null],
    ['/^#/d', null],
    ['s/a/b/g;s/c/d/2', null],
    ['s|/usr|/opt|g', null],
    ['y/abc/xyz/', null],
    ['/x/{p;q}', null],
    ['1~2p', null],
    ['a\\\nappended', null],
    ['w out', 'sed command w writes a file'],
    ['1,5W out', 'sed command w writes a file'],
    ['e ls', 'sed command e runs a program'],
    ['s/a/b/w out', 'sed s///w writes a file'],
    ['s/a/b/ge', 'sed s///e runs a program'],
    ['s/[/]/x/', 'sed script not understood'], // GNU and BSD disagree on / inside [ ]
    ['k', 'sed script not understood'],
    ['s/a/b', 'sed script not understood'],
  ])('%j → %s', (script, expected) => {
    const got = sedScriptProblem(script);
    if (expected === null) expect(got).toBeNull();
    else expect(got).toBe(expected);
  });
});
