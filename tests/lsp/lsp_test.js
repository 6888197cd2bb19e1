// Drives `pipec lsp` with Microsoft's LSP client libraries (vscode-jsonrpc,
// vscode-languageserver-protocol), as VS Code does: initialize, open, change, hover,
// definition, completion, document symbols, shutdown, exit; then malformed input.
// Positions are UTF-16 code units (the client offers no other encoding): a line holds
// an emoji (two units, four bytes) and an 'é' (one unit, two bytes) before the names.
//
// usage: node lsp_test.js PIPEC WORKDIR
'use strict';
const assert = require('assert');
const cp = require('child_process');
const fs = require('fs');
const path = require('path');
const rpc = require('vscode-jsonrpc/node');
const lsp = require('vscode-languageserver-protocol');

const [pipec, work] = process.argv.slice(2);
fs.mkdirSync(work, { recursive: true });
const lib = path.join(work, 'lib.pipe');
const main = path.join(work, 'main.pipe');
fs.writeFileSync(lib, [
  '## Fetches a URL into a file.',
  'op fetch(',
  '  ## Where from.',
  '  url: string,',
  ') -> (',
  '  ## The bytes it got.',
  '  size: int,',
  ') {',
  '  image "curlimages/curl:8.5.0"',
  '  command ["sh", "-c", "curl -fsS \\"$0\\" | wc -c > /tmp/size", "${url}"]',
  '  outputs {size: "/tmp/size"}',
  '}',
  ''].join('\n'));
const good = [
  'use arena',
  'use "lib.pipe"',
  '',
  'pipeline demo {',
  '  ## How many workers train.',
  '  param workers: int = 2',
  '  step get = fetch(url: "https://example.com")',
  '  step train = mpi_job(image: "horovod/horovod:0.28.1", command: "mpirun train ${get.size} # 🙂 é", workers: workers)',
  '}',
  ''].join('\n');
const broken = good.replace('workers: workers)', 'worker: workers)');
fs.writeFileSync(main, broken);
const uri = 'file://' + main;
const at = (text, needle, offset = 0) => {
  const i = text.indexOf(needle) + offset;
  const before = text.slice(0, i).split('\n');
  return { line: before.length - 1, character: before[before.length - 1].length };
};

async function main_() {
  const child = cp.spawn(pipec, ['lsp'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const connection = lsp.createProtocolConnection(
    new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  const diagnostics = [];
  let wake = null;
  connection.onNotification(lsp.PublishDiagnosticsNotification.type, (p) => {
    diagnostics.push(p);
    if (wake) wake();
  });
  const nextDiagnostics = async () => {
    while (diagnostics.length === 0) await new Promise((r) => { wake = r; });
    return diagnostics.shift();
  };
  connection.listen();

  const init = await connection.sendRequest(lsp.InitializeRequest.type,
    { processId: process.pid, rootUri: 'file://' + work, capabilities: {} });
  assert.ok(init.capabilities.hoverProvider && init.capabilities.definitionProvider &&
            init.capabilities.completionProvider && init.capabilities.documentSymbolProvider);
  await connection.sendNotification(lsp.InitializedNotification.type, {});

  // Open: the same error `pipec check` reports, at the same place.
  await connection.sendNotification(lsp.DidOpenTextDocumentNotification.type,
    { textDocument: { uri, languageId: 'pipe', version: 1, text: broken } });
  let d = await nextDiagnostics();
  const check = cp.spawnSync(pipec, ['check', main, '--diagnostics=json'], { encoding: 'utf8' });
  const expected = JSON.parse(check.stderr.trim().split('\n')[0]).location;
  expected.message = JSON.parse(check.stderr.trim().split('\n')[0]).message;
  assert.strictEqual(d.uri, uri);
  assert.ok(d.diagnostics.length >= 1, 'an error for the broken document');
  assert.strictEqual(d.diagnostics[0].message, expected.message);
  // check's column counts bytes; the LSP position counts UTF-16 units: the same place.
  const before = Buffer.from(broken).subarray(0, expected.offset).toString().split('\n');
  assert.strictEqual(d.diagnostics[0].range.start.line, expected.line - 1);
  assert.strictEqual(before.length - 1, expected.line - 1);
  assert.strictEqual(d.diagnostics[0].range.start.character, before[before.length - 1].length);
  assert.ok(before[before.length - 1].length < expected.column - 1, 'the line holds multi-byte characters');
  assert.strictEqual(d.diagnostics[0].severity, 1);

  // Change: fixed, no diagnostics.
  await connection.sendNotification(lsp.DidChangeTextDocumentNotification.type,
    { textDocument: { uri, version: 2 }, contentChanges: [{ text: good }] });
  d = await nextDiagnostics();
  assert.deepStrictEqual(d.diagnostics, []);

  // Hover: a parameter's type and doc comment; a stdlib op's argument and its doc.
  let h = await connection.sendRequest(lsp.HoverRequest.type,
    { textDocument: { uri }, position: at(good, 'workers: workers)', 10) });
  assert.match(h.contents.value, /parameter workers: int/);
  assert.match(h.contents.value, /How many workers train\./);
  h = await connection.sendRequest(lsp.HoverRequest.type,
    { textDocument: { uri }, position: at(good, 'workers: workers)', 1) });
  assert.match(h.contents.value, /op parameter workers: int/);
  assert.match(h.contents.value, /mpi_job/);
  assert.match(h.contents.value, /Worker\.replicas/);
  h = await connection.sendRequest(lsp.HoverRequest.type,
    { textDocument: { uri }, position: at(good, 'fetch(url', 2) });
  assert.match(h.contents.value, /op fetch\(url: string\) -> \(size: int\)/);
  assert.match(h.contents.value, /Fetches a URL into a file\./);

  // Definition: a parameter, a step (from its output's use), an op in a used file, the file.
  let def = await connection.sendRequest(lsp.DefinitionRequest.type,
    { textDocument: { uri }, position: at(good, 'workers: workers)', 10) });
  assert.strictEqual(def.uri, uri);
  assert.deepStrictEqual(def.range.start, at(good, 'workers: int'));
  def = await connection.sendRequest(lsp.DefinitionRequest.type,
    { textDocument: { uri }, position: at(good, 'get.size', 1) });
  assert.deepStrictEqual(def.range.start, at(good, 'get = fetch'));
  def = await connection.sendRequest(lsp.DefinitionRequest.type,
    { textDocument: { uri }, position: at(good, 'fetch(url', 1) });
  assert.strictEqual(def.uri, 'file://' + lib);
  assert.deepStrictEqual(def.range.start, { line: 1, character: 3 });
  def = await connection.sendRequest(lsp.DefinitionRequest.type,
    { textDocument: { uri }, position: at(good, '"lib.pipe"', 2) });
  assert.strictEqual(def.uri, 'file://' + lib);

  // Completion: a step's outputs after `get.`; an op's arguments inside its call.
  const dotted = good.replace('${get.size}', '${get.}');
  await connection.sendNotification(lsp.DidChangeTextDocumentNotification.type,
    { textDocument: { uri, version: 3 }, contentChanges: [{ text: dotted }] });
  await nextDiagnostics();
  let c = await connection.sendRequest(lsp.CompletionRequest.type,
    { textDocument: { uri }, position: at(dotted, '${get.}', 6) });
  assert.deepStrictEqual(c.map((i) => i.label), ['size']);
  c = await connection.sendRequest(lsp.CompletionRequest.type,
    { textDocument: { uri }, position: at(dotted, 'image: "horovod') });
  const labels = c.map((i) => i.label);
  for (const want of ['image', 'command', 'workers', 'gpus', 'workers', 'get', 'fetch'])
    assert.ok(labels.includes(want), `completion lacks ${want}: ${labels.join(' ')}`);

  // A pipeline's call offers its parameters as an op's call does, with types and docs: one
  // of a used file that no pipeline called yet (the call being typed is the first), and
  // one of this file that is called.
  const libp = path.join(work, 'libp.pipe');
  fs.writeFileSync(libp, [
    'use "lib.pipe"',
    '',
    '## Trains and evaluates.',
    'pipeline train_eval -> (size: int) {',
    '  ## The learning rate.',
    '  param lr: float = 0.1',
    '  param data: string',
    '  step f = fetch(url: data)',
    '  output size = f.size',
    '}',
    ''].join('\n'));
  const callsGood = [
    'use "libp.pipe"',
    '',
    'pipeline local_one -> (n: int) {',
    '  ## How many.',
    '  param k: int = 1',
    '  step g = fetch(url: "x")',
    '  output n = g.size',
    '}',
    '',
    'pipeline top {',
    '  step a = local_one(k: 2)',
    '}',
    ''].join('\n');
  const calls = path.join(work, 'calls.pipe');
  fs.writeFileSync(calls, callsGood);
  const callsUri = 'file://' + calls;
  await connection.sendNotification(lsp.DidOpenTextDocumentNotification.type,
    { textDocument: { uri: callsUri, languageId: 'pipe', version: 1, text: callsGood } });
  assert.deepStrictEqual((await nextDiagnostics()).diagnostics, []);
  const typing = callsGood.replace('  step a = local_one(k: 2)\n', '  step a = local_one(k: 2)\n  step b = train_eval(\n');
  await connection.sendNotification(lsp.DidChangeTextDocumentNotification.type,
    { textDocument: { uri: callsUri, version: 2 }, contentChanges: [{ text: typing }] });
  await nextDiagnostics();
  const args = (items) => items.filter((i) => i.insertText !== undefined)
    .map((i) => [i.label, i.kind, i.insertText, i.detail, i.documentation]);
  c = await connection.sendRequest(lsp.CompletionRequest.type,
    { textDocument: { uri: callsUri }, position: at(typing, 'train_eval(', 11) });
  assert.deepStrictEqual(args(c), [['lr', 5, 'lr: ', 'parameter: float', 'The learning rate.'],
                                   ['data', 5, 'data: ', 'parameter: string', undefined]]);
  c = await connection.sendRequest(lsp.CompletionRequest.type,
    { textDocument: { uri: callsUri }, position: at(typing, 'local_one(k', 10) });
  assert.deepStrictEqual(args(c), [['k', 5, 'k: ', 'parameter: int', 'How many.']]);
  // An op's call, in the same document: its op parameters (the same path).
  c = await connection.sendRequest(lsp.CompletionRequest.type,
    { textDocument: { uri: callsUri }, position: at(typing, 'fetch(url: "x")', 6) });
  assert.deepStrictEqual(args(c), [['url', 5, 'url: ', 'op parameter: string', 'Where from.']]);

  // Document symbols.
  const symbols = await connection.sendRequest(lsp.DocumentSymbolRequest.type, { textDocument: { uri } });
  // (the pipeline too: a step may call it, docs/language.md "Pipelines as steps")
  assert.deepStrictEqual(symbols.map((s) => s.name).sort(), ['demo', 'get', 'train', 'workers']);

  // An unknown request is an error, not a crash.
  await assert.rejects(connection.sendRequest('pipec/unknown', {}), /method not found/);

  await connection.sendRequest(lsp.ShutdownRequest.type);
  await connection.sendNotification(lsp.ExitNotification.type);
  assert.strictEqual(await exited, 0, 'exit after shutdown is 0');
  connection.dispose();

  // Malformed input: a body that is not JSON gets a parse error; exit without shutdown is 1.
  const frame = (body) => `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const raw = cp.spawnSync(pipec, ['lsp'], {
    input: frame('{not json') + frame('{"jsonrpc":"2.0","id":7,"method":"no/such"}') +
           frame('{"jsonrpc":"2.0","method":"exit"}'),
    encoding: 'utf8',
  });
  assert.strictEqual(raw.status, 1);
  assert.match(raw.stdout, /"code":-32700/);
  assert.match(raw.stdout, /"code":-32601/);
  console.log('ok');
}

main_().catch((e) => {
  console.error('FAIL:', e);
  process.exit(1);
});
