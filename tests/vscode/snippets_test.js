// The extension's snippets (editors/vscode/snippets/pipe.json), expanded as VS Code expands
// them with each placeholder's default (a choice's first item), make one program that
// `pipec check` accepts: an op, a Python op, and a pipeline holding a parameter, steps, a
// training step, a Trainer v2 `train_job` step, a loop, a condition and `finally`. Every
// snippet is used.
//
// usage: node snippets_test.js PIPEC WORKDIR
'use strict';
const assert = require('assert');
const cp = require('child_process');
const fs = require('fs');
const path = require('path');

const [pipec, work] = process.argv.slice(2);
const snippets = JSON.parse(fs.readFileSync(path.join(__dirname, '../../editors/vscode/snippets/pipe.json'), 'utf8'));
const used = new Set();

// The text of snippet `name`; `given` fills placeholders by number (0: the final cursor).
function expand(name, given = {}) {
  assert.ok(snippets[name], `no snippet '${name}'`);
  used.add(name);
  const values = { ...given };
  let body = snippets[name].body.join('\n').replace(/\t/g, '  ');
  // Placeholders: their default, or a choice's first item.
  body = body.replace(/\$\{(\d+):([^}]*)\}|\$\{(\d+)\|([^|]*)\|\}/g, (_, n, def, m, choices) => {
    const k = n || m;
    if (!(k in values)) values[k] = n ? def : choices.split(',')[0];
    return `\u0000${k}\u0000`;
  });
  // Mirrors ($N), in the body or in a default, take the placeholder's text.
  const mirror = (text) => text.replace(/(?<!\\)\$(\d+)/g, (_, k) => `\u0000${k}\u0000`);
  for (let i = 0; i < 3; ++i) body = mirror(body).replace(/\u0000(\d+)\u0000/g, (_, k) => values[k] || '');
  return body.replace(/\\\$/g, '$');
}

const program = [
  'use arena',
  expand('op'),
  expand('python op'),
  expand('pipeline', {
    0: [
      expand('param', { 1: 'flag' }),
      expand('step', { 1: 'second', 4: 'flag' }),
      expand('training step'),
      expand('trainer v2 step'),
      expand('for', { 0: expand('step', { 1: 'each', 4: 'item' }) }),
      expand('if', { 1: 'flag == "value"', 2: expand('step', { 1: 'yes' }), 0: expand('step', { 1: 'no' }) }),
      expand('finally'),
    ].join('\n'),
  }),
  ''].join('\n');
assert.deepStrictEqual([...used].sort(), Object.keys(snippets).sort(), 'every snippet is used');
fs.mkdirSync(work, { recursive: true });
const file = path.join(work, 'snippets.pipe');
fs.writeFileSync(file, program);
const r = cp.spawnSync(pipec, ['check', file], { encoding: 'utf8' });
assert.strictEqual(r.status, 0, `pipec check of the expanded snippets:\n${r.stderr}\n${program}`);
// An op snippet's python is Python: square(x) is checked by pipec against the op.
assert.match(program, /op square\(x: float\) -> \(y: float\) \{\n  python ```\n    def square\(x: float\) -> float:/);
// The train_job snippet offers the runtimes Trainer v2.3 ships, the ones whose TrainJobs
// tests/jobs/train_job_test.cpp validates against the CRD (its kShipped).
assert.match(program, /step tune = train_job\(\n  trainer_runtime: "torch-distributed",\n  num_nodes: 2,/);
const jobsTest = fs.readFileSync(path.join(__dirname, '../jobs/train_job_test.cpp'), 'utf8');
const shipped = jobsTest.slice(jobsTest.indexOf('kShipped = {'), jobsTest.indexOf('};', jobsTest.indexOf('kShipped = {')));
const offered = snippets['trainer v2 step'].body.join('\n').match(/trainer_runtime: "\$\{2\|([^|]*)\|\}"/);
assert.ok(offered, 'the train_job snippet offers its runtimes as a choice');
assert.deepStrictEqual(offered[1].split(','), [...shipped.matchAll(/\{"([a-z0-9.-]+)", R"\(/g)].map((m) => m[1]));
console.log(`ok: ${used.size} snippets`);
