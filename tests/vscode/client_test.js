// The extension's client side against `pipec lsp`, without VS Code: editors/vscode/src/launch.js
// (what the extension runs, from its settings) chooses pipec and builds the server's command
// line; the server is spawned from exactly that, as vscode-languageclient spawns an
// `Executable`, and driven with the protocol library vscode-languageclient itself uses
// (vscode-languageserver-protocol, from the extension's node_modules): open, diagnostics,
// hover, completion, formatting (the edit equals `pipec fmt -`, the fallback's command line).
// Then the settings: pipec.path, PATH, a missing and a too old pipec; and the command lines of
// check, build (target and kind) and graph (the panel's page).
//
// usage: node client_test.js PIPEC WORKDIR
'use strict';
const assert = require('assert');
const cp = require('child_process');
const fs = require('fs');
const path = require('path');

const extension = path.resolve(__dirname, '../../editors/vscode');
const need = (name) => require(require.resolve(name, { paths: [extension] }));
const launch = require(path.join(extension, 'src/launch.js'));
const rpc = need('vscode-jsonrpc/node');
const lsp = need('vscode-languageserver-protocol');

const [pipecArg, work] = process.argv.slice(2);
const pipec = path.resolve(pipecArg);
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });

const messy = [
  'op echo(message: string) {',
  '    image "busybox:1.36"',
  '  command ["echo","${message}"]',
  '}',
  'pipeline hello {',
  '   ## Whom to greet.',
  '   param who: string = "world"',
  '   step greet = echo( message : "hello ${who}" )',
  '}',
  ''].join('\n');
const file = path.join(work, 'hello.pipe');
fs.writeFileSync(file, messy);
const uri = 'file://' + file;
const at = (text, needle, offset = 0) => {
  const before = text.slice(0, text.indexOf(needle) + offset).split('\n');
  return { line: before.length - 1, character: before[before.length - 1].length };
};
// A text edit applied to `text` (positions in UTF-16 units; this text is ASCII).
const apply = (text, edit) => {
  const off = (p) => text.split('\n').slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  return text.slice(0, off(edit.range.start)) + edit.newText + text.slice(off(edit.range.end));
};

async function session() {
  const chosen = launch.checkPipec({ path: pipec });
  assert.ok(chosen.ok, chosen.message);
  const server = launch.serverOptions(chosen.command, work);
  assert.deepStrictEqual(server, { command: pipec, args: ['lsp'], options: { cwd: work } });
  const child = cp.spawn(server.command, server.args, { ...server.options, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const connection = lsp.createProtocolConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  const diagnostics = [];
  let wake = null;
  connection.onNotification(lsp.PublishDiagnosticsNotification.type, (p) => { diagnostics.push(p); if (wake) wake(); });
  const nextDiagnostics = async () => {
    while (diagnostics.length === 0) await new Promise((r) => { wake = r; });
    return diagnostics.shift();
  };
  connection.listen();

  const init = await connection.sendRequest(lsp.InitializeRequest.type, {
    processId: process.pid, rootUri: 'file://' + work,
    capabilities: { general: { positionEncodings: ['utf-16'] }, textDocument: { formatting: { dynamicRegistration: false } } },
  });
  const caps = init.capabilities;
  assert.ok(caps.hoverProvider && caps.completionProvider && caps.documentFormattingProvider,
    'the server hovers, completes and formats (else the extension formats with pipec fmt)');
  await connection.sendNotification(lsp.InitializedNotification.type, {});

  // Open a document with an error: its diagnostic; then the text that checks: none.
  const broken = messy.replace('message : "hello', 'mesage : "hello');
  await connection.sendNotification(lsp.DidOpenTextDocumentNotification.type,
    { textDocument: { uri, languageId: launch.documentSelector[0].language, version: 1, text: broken } });
  let d = await nextDiagnostics();
  assert.strictEqual(d.uri, uri);
  assert.ok(d.diagnostics.length >= 1 && /mesage/.test(d.diagnostics[0].message), JSON.stringify(d.diagnostics));
  assert.deepStrictEqual(d.diagnostics[0].range.start, at(broken, 'mesage'));
  await connection.sendNotification(lsp.DidChangeTextDocumentNotification.type,
    { textDocument: { uri, version: 2 }, contentChanges: [{ text: messy }] });
  d = await nextDiagnostics();
  assert.deepStrictEqual(d.diagnostics, []);

  // Hover: the parameter's type and doc comment.
  const h = await connection.sendRequest(lsp.HoverRequest.type, { textDocument: { uri }, position: at(messy, '${who}', 3) });
  assert.match(h.contents.value, /parameter who: string/);
  assert.match(h.contents.value, /Whom to greet\./);

  // Completion in the op's call: its parameter.
  const c = await connection.sendRequest(lsp.CompletionRequest.type, { textDocument: { uri }, position: at(messy, 'echo( ', 5) });
  assert.ok(c.some((i) => i.label === 'message' && i.insertText === 'message: '), JSON.stringify(c));

  // Formatting: one edit that makes the text `pipec fmt -`'s layout; then nothing to do.
  const fmt = cp.spawnSync(pipec, launch.commands.fmt(), { input: messy, encoding: 'utf8', cwd: work });
  assert.strictEqual(fmt.status, 0, fmt.stderr);
  assert.notStrictEqual(fmt.stdout, messy);
  let edits = await connection.sendRequest(lsp.DocumentFormattingRequest.type,
    { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } });
  assert.strictEqual(edits.length, 1);
  assert.strictEqual(apply(messy, edits[0]), fmt.stdout);
  await connection.sendNotification(lsp.DidChangeTextDocumentNotification.type,
    { textDocument: { uri, version: 3 }, contentChanges: [{ text: fmt.stdout }] });
  await nextDiagnostics();
  edits = await connection.sendRequest(lsp.DocumentFormattingRequest.type,
    { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } });
  assert.deepStrictEqual(edits, []);
  // A text with a syntax error is left alone, as `pipec fmt` leaves it.
  await connection.sendNotification(lsp.DidChangeTextDocumentNotification.type,
    { textDocument: { uri, version: 4 }, contentChanges: [{ text: messy.replace('step greet', 'step greet greet') }] });
  await nextDiagnostics();
  edits = await connection.sendRequest(lsp.DocumentFormattingRequest.type,
    { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } });
  assert.strictEqual(edits, null);

  await connection.sendRequest(lsp.ShutdownRequest.type);
  await connection.sendNotification(lsp.ExitNotification.type);
  assert.strictEqual(await exited, 0);
  connection.dispose();
}

function settings() {
  // pipec.path empty: `pipec` on PATH.
  const onPath = launch.checkPipec({ path: '' }, { PATH: `/nonexistent${path.delimiter}${path.dirname(pipec)}` });
  assert.ok(onPath.ok && onPath.command === pipec, JSON.stringify(onPath));
  const none = launch.checkPipec({ path: '' }, { PATH: work });
  assert.ok(!none.ok && /not found on PATH/.test(none.message) && /pipec\.path/.test(none.message), none.message);
  // A relative path: from the workspace folder.
  const relative = launch.checkPipec({ path: path.relative(work, pipec) }, process.env, work);
  assert.ok(relative.ok && relative.command === pipec, JSON.stringify(relative));
  assert.ok(!launch.checkPipec({ path: path.relative(work, pipec) }, process.env, path.join(work, 'old')).ok);
  const wrong = launch.checkPipec({ path: path.join(work, 'no-such-pipec') });
  assert.ok(!wrong.ok && /pipec\.path is '.*no-such-pipec', which is not an executable/.test(wrong.message), wrong.message);
  // Too old, and not pipec at all.
  const old = path.join(work, 'old', 'pipec');
  fs.mkdirSync(path.dirname(old));
  fs.writeFileSync(old, '#!/bin/sh\necho "pipec 0.0.9 (commit 0123456789ab)"\n', { mode: 0o755 });
  const tooOld = launch.checkPipec({ path: old });
  assert.ok(!tooOld.ok && tooOld.message.includes(`is pipec 0.0.9, too old for this extension: it needs pipec ${launch.MIN_VERSION} or newer`), tooOld.message);
  const other = path.join(work, 'other');
  fs.writeFileSync(other, '#!/bin/sh\necho "other 1.0"\n', { mode: 0o755 });
  const notPipec = launch.checkPipec({ path: other });
  assert.ok(!notPipec.ok && /did not answer 'pipec VERSION' \(other 1\.0\)/.test(notPipec.message), notPipec.message);
  // The real one is new enough: its version is what --version says.
  const real = launch.checkPipec({ path: pipec });
  assert.strictEqual(`pipec ${real.version}`, cp.execFileSync(pipec, ['--version'], { encoding: 'utf8' }).split(' (')[0].trim());
}

function commandLines() {
  const good = path.join(work, 'good.pipe');
  const bad = path.join(work, 'bad.pipe');
  fs.writeFileSync(good, messy);
  fs.writeFileSync(bad, messy.replace('message : "hello', 'mesage : "hello'));
  const run = (args) => cp.spawnSync(pipec, args, { cwd: work, encoding: 'utf8' });
  let r = run(launch.commands.check(good, 'kfp-v2'));
  assert.strictEqual(r.status, 0, r.stderr);
  r = run(launch.commands.check(bad));
  assert.strictEqual(r.status, 1);
  assert.match(r.stderr, /bad\.pipe:8:\d+: error: .*mesage/);
  // Build: each target; the kfp-v1 kinds (a cron workflow with its schedule).
  for (const [options, out] of [
    [{ target: 'kfp-v2', output: path.join(work, 'v2.yaml') }, 'v2.yaml'],
    [{ target: 'kfp-v1', kind: 'workflow', output: path.join(work, 'v1.yaml') }, 'v1.yaml'],
    [{ target: 'kfp-v1', kind: 'workflow-template', output: path.join(work, 'tpl.yaml') }, 'tpl.yaml'],
    [{ target: 'kfp-v1', kind: 'cron-workflow', cron: '0 2 * * *', output: path.join(work, 'cron.yaml') }, 'cron.yaml'],
  ]) {
    r = run(launch.commands.build(good, options));
    assert.strictEqual(r.status, 0, `${launch.commands.build(good, options).join(' ')}: ${r.stderr}`);
    assert.ok(fs.statSync(path.join(work, out)).size > 0);
  }
  assert.match(fs.readFileSync(path.join(work, 'v2.yaml'), 'utf8'), /pipelineInfo:/);
  assert.match(fs.readFileSync(path.join(work, 'tpl.yaml'), 'utf8'), /kind: WorkflowTemplate/);
  assert.match(fs.readFileSync(path.join(work, 'cron.yaml'), 'utf8'), /kind: CronWorkflow[\s\S]*0 2 \* \* \*/);
  assert.throws(() => launch.commands.build(good, { target: 'argo' }), /unknown target 'argo'/);
  // The graph: Graphviz's SVG, shown as an image on a page that runs nothing.
  r = run(launch.commands.graph(good));
  assert.strictEqual(r.status, 0, r.stderr);
  assert.match(r.stdout, /<svg[\s\S]*greet[\s\S]*<\/svg>/);
  const page = launch.graphHtml(r.stdout, 'graph of <good>.pipe');
  assert.ok(page.includes(`src="data:image/svg+xml;base64,${Buffer.from(r.stdout).toString('base64')}"`));
  assert.match(page, /Content-Security-Policy" content="default-src 'none'; img-src data:/);
  assert.ok(!page.includes('<good>') && page.includes('&#60;good&#62;'));
  assert.deepStrictEqual(launch.commands.runLocal(good), ['run', '--local', good]);
  r = run([...launch.commands.runLocal(good).slice(0, 2), '--help']);
  assert.strictEqual(r.status, 0, 'pipec run --local exists');
}

session().then(() => {
  settings();
  commandLines();
  console.log('ok');
}).catch((e) => {
  console.error('FAIL:', e);
  process.exit(1);
});
