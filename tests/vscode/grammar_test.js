// The extension's TextMate grammar (editors/vscode/syntaxes/pipe.tmLanguage.json) on every
// .pipe file of the repository (git ls-files '*.pipe'):
//  * covered: every character other than a space, tab or line end lies in a token with a scope
//    beyond the root `source.pipe`;
//  * invalid only where pipec says so: a scope containing "invalid" marks a character only on
//    a line where `pipec check` reports an error (a NUL byte, an invisible character, `\x`,
//    `${` unclosed, `1x`, text after a raw block's fence): every program pipec accepts has
//    none, and the files that test those errors have them exactly on their error lines;
//  * every keyword of the lexer (kKeywords in compiler/syntax/lexer.hpp) is a keyword,
//    storage type or constant, not a name;
//  * golden scopes: tests/vscode/golden/NAME.scopes for a few files (interpolation, raw
//    Python, doc comments, every keyword, durations and quantities). Regenerate them with
//      node tests/vscode/grammar_test.js --update
//    and read the diff before committing it.
//
// usage: node grammar_test.js PIPEC [--update]
'use strict';
const assert = require('assert');
const cp = require('child_process');
const fs = require('fs');
const path = require('path');
const { loadGrammar, tokenize } = require('./tokenize');

const root = path.resolve(__dirname, '../..');
const goldenDir = path.join(__dirname, 'golden');
const golden = {
  'every_keyword': 'tests/vscode/inputs/every_keyword.pipe',
  'python_ops': 'dsl-examples/python_ops.pipe',
  'data_ops': 'dsl-examples/lib/data_ops.pipe',
  'arena': 'stdlib/arena.pipe',
};

// The .pipe files of the repository: git's list, or, outside a git checkout (a source
// archive), every .pipe under the root but build trees and node_modules.
function pipeFiles() {
  const git = cp.spawnSync('git', ['ls-files', '-z', '*.pipe'], { cwd: root, encoding: 'utf8' });
  if (git.status === 0) return git.stdout.split('\0').filter(Boolean);
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory() && !/^(\.git|node_modules|build.*)$/.test(e.name)) walk(rel);
      // A dot-file is another test's temporary copy (fmt's .fmt-PID-NAME.pipe), gone soon.
      else if (e.isFile() && e.name.endsWith('.pipe') && !e.name.startsWith('.')) out.push(rel);
    }
  };
  walk('');
  return out.sort();
}

// Where a character is left without a scope of its own (`problems`), and the lines where one
// is marked invalid (`invalid`: line -> the first such place).
function uncovered(tokens, text) {
  const problems = [];
  const invalid = new Map();
  const lines = text.split(/\r\n|\r|\n/);
  const byLine = new Map();
  for (const t of tokens) {
    if (!byLine.has(t.line)) byLine.set(t.line, []);
    byLine.get(t.line).push(t);
  }
  lines.forEach((line, i) => {
    const covered = new Array(line.length).fill(null);
    for (const t of byLine.get(i + 1) || []) for (let c = t.start; c < t.end; ++c) covered[c] = t.scopes;
    for (let c = 0; c < line.length; ++c) {
      if (/[ \t\uFEFF]/.test(line[c])) continue;
      const scopes = covered[c];
      if (!scopes || scopes.length < 2) problems.push(`${i + 1}:${c + 1}: '${line[c]}' has no scope but source.pipe`);
      else if (scopes.some((s) => s.includes('invalid')) && !invalid.has(i + 1))
        invalid.set(i + 1, `${i + 1}:${c + 1}: '${line[c]}' is ${scopes.join(' ')}`);
    }
  });
  return { problems, invalid };
}

// One line per token: LINE:START-END, its text (JSON), its scopes below the root.
function scopesText(tokens) {
  return tokens.filter((t) => t.text.trim() !== '')
    .map((t) => `${t.line}:${t.start + 1}-${t.end} ${JSON.stringify(t.text)} ${t.scopes.slice(1).join(' ')}`)
    .join('\n') + '\n';
}

async function main() {
  const pipec = path.resolve(process.argv[2]);
  const update = process.argv.includes('--update');
  const grammar = await loadGrammar();
  const files = pipeFiles();
  assert.ok(files.length > 100, `only ${files.length} .pipe files found`);
  const failures = [];
  let marked = 0;
  for (const f of files) {
    const text = fs.readFileSync(path.join(root, f), 'utf8');
    const { problems, invalid } = uncovered(tokenize(grammar, text), text);
    for (const p of problems) failures.push(`${f}:${p}`);
    if (invalid.size === 0) continue;
    ++marked;
    const check = cp.spawnSync(pipec, ['check', path.basename(f), '--diagnostics=json'],
      { cwd: path.join(root, path.dirname(f)), encoding: 'utf8' });
    const errors = new Set(check.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
      .filter((d) => d.severity === 'error' && d.location.file === path.basename(f)).map((d) => d.location.line));
    for (const [line, where] of invalid)
      if (!errors.has(line)) failures.push(`${f}:${where}, but pipec check reports no error on line ${line}`);
  }
  assert.deepStrictEqual(failures, [], `characters without a scope, or invalid where pipec sees no error:\n${failures.slice(0, 40).join('\n')}`);

  // Every keyword of the lexer, where a name could stand: not a name's scope.
  const lexer = fs.readFileSync(path.join(root, 'compiler/syntax/lexer.hpp'), 'utf8');
  const list = /kKeywords = \{([^}]*)\}/.exec(lexer);
  assert.ok(list, 'kKeywords not found in lexer.hpp');
  const keywords = [...list[1].matchAll(/"([a-z]+)"/g)].map((m) => m[1]);
  assert.ok(keywords.length >= 17, `kKeywords: ${keywords}`);
  for (const k of keywords) {
    const t = tokenize(grammar, `x = ${k}\n`).find((tok) => tok.text === k);
    assert.ok(t && t.scopes.some((s) => /^(keyword|storage\.type|constant\.language)\./.test(s)),
      `keyword '${k}' is ${t ? t.scopes.join(' ') : 'not a token'}`);
  }
  const every = fs.readFileSync(path.join(root, golden.every_keyword), 'utf8');
  for (const k of keywords) assert.ok(new RegExp(`\\b${k}\\b`).test(every), `${golden.every_keyword} lacks '${k}'`);
  const accepted = cp.spawnSync(pipec, ['check', golden.every_keyword], { cwd: root, encoding: 'utf8' });
  assert.strictEqual(accepted.status, 0, `pipec check ${golden.every_keyword}: ${accepted.stderr}`);

  // Golden scopes.
  const stale = [];
  for (const [name, file] of Object.entries(golden)) {
    const got = scopesText(tokenize(grammar, fs.readFileSync(path.join(root, file), 'utf8')));
    const where = path.join(goldenDir, `${name}.scopes`);
    if (update) fs.writeFileSync(where, got);
    else if (!fs.existsSync(where) || fs.readFileSync(where, 'utf8') !== got) stale.push(name);
  }
  assert.deepStrictEqual(stale, [], 'scopes differ from tests/vscode/golden (regenerate: node tests/vscode/grammar_test.js --update)');
  console.log(`ok: ${files.length} files (${marked} with errors marked invalid), ${keywords.length} keywords, ${Object.keys(golden).length} golden files`);
}

main().catch((e) => {
  console.error('FAIL:', e.message || e);
  process.exit(1);
});
