// editors/vscode/src/extension.js, the VS Code side, run in Node.js against a stand-in for
// VS Code's API (the `vscode` module exists only inside VS Code) and for vscode-languageclient's
// LanguageClient; everything it runs is the real pipec. It checks what the API cannot check
// for it: activation registers exactly the contributed commands and starts the client with
// launch.js's server options; check, build (target and kind picked), show the graph and run
// locally run pipec as they should; a missing pipec is reported with no client started; a
// server without formatting gets the `pipec fmt -` formatter, whose edit is pipec fmt's text.
//
// usage: node extension_test.js PIPEC WORKDIR
'use strict';
const assert = require('assert');
const cp = require('child_process');
const fs = require('fs');
const Module = require('module');
const path = require('path');

const [pipecArg, work] = process.argv.slice(2);
const pipec = path.resolve(pipecArg);
const extension = path.resolve(__dirname, '../../editors/vscode');
const manifest = JSON.parse(fs.readFileSync(path.join(extension, 'package.json'), 'utf8'));
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
const file = path.join(work, 'hello.pipe');
const messy = 'op echo(message: string) {\n    image "busybox:1.36"\n  command ["echo","${message}"]\n}\n' +
              'pipeline hello {\n   param who: string = "world"\n   step greet = echo( message : "hello ${who}" )\n}\n';
fs.writeFileSync(file, messy);

// What the extension did, scenario by scenario.
let seen;
let answers;      // what the quick picks and input boxes answer, in order
let capabilities; // what the stand-in server announces
const disposable = { dispose() {} };
const vscode = {
  ViewColumn: { Beside: -2 },
  Range: class { constructor(a, b) { this.start = a; this.end = b; } },
  TextEdit: { replace: (range, newText) => ({ range, newText }) },
  workspace: {
    workspaceFolders: [{ uri: { fsPath: work } }],
    getConfiguration: () => ({ get: (k) => seen.settings[k] }),
    onDidSaveTextDocument: () => disposable,
    onDidChangeConfiguration: () => disposable,
  },
  window: {
    activeTextEditor: null,
    createOutputChannel: () => ({ append: (t) => { seen.output += t; }, appendLine: (t) => { seen.output += `${t}\n`; }, show() {}, dispose() {} }),
    showErrorMessage: (m) => { seen.messages.push(['error', m]); return Promise.resolve(undefined); },
    showWarningMessage: (m) => { seen.messages.push(['warning', m]); return Promise.resolve(undefined); },
    showInformationMessage: (m) => { seen.messages.push(['info', m]); return Promise.resolve(undefined); },
    showQuickPick: (items) => { seen.picks.push(items); return Promise.resolve(answers.shift()); },
    showInputBox: () => Promise.resolve(answers.shift()),
    createTerminal: (options) => { seen.terminals.push(options); return { show() {} }; },
    createWebviewPanel: () => {
      const panel = { webview: { html: '' }, onDidDispose() {}, reveal() {} };
      seen.panels.push(panel);
      return panel;
    },
  },
  commands: {
    registerCommand: (name, fn) => { seen.commands.set(name, fn); return disposable; },
    executeCommand: () => Promise.resolve(),
  },
  languages: {
    registerDocumentFormattingEditProvider: (selector, provider) => { seen.formatters.push(provider); return disposable; },
  },
};
class LanguageClient {
  constructor(id, name, server, client) { seen.clients.push({ id, server, client }); }
  start() { this.initializeResult = { capabilities }; return Promise.resolve(); }
  stop() { return Promise.resolve(); }
}
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'vscode') return vscode;
  if (request === 'vscode-languageclient/node') return { LanguageClient };
  return load.call(this, request, ...rest);
};

const documentOf = (f) => {
  const text = () => fs.readFileSync(f, 'utf8');
  return {
    languageId: 'pipe', isUntitled: false, isDirty: false, uri: { fsPath: f }, getText: text,
    positionAt: (offset) => {
      const before = text().slice(0, offset).split('\n');
      return { line: before.length - 1, character: before[before.length - 1].length };
    },
  };
};

async function activate(settings, caps) {
  seen = { settings, output: '', messages: [], picks: [], terminals: [], panels: [], commands: new Map(), formatters: [], clients: [] };
  capabilities = caps;
  answers = [];
  const main = path.join(extension, manifest.main);
  delete require.cache[require.resolve(main)];
  const ext = require(main);
  await ext.activate({ subscriptions: [] });
  return ext;
}

async function main() {
  vscode.window.activeTextEditor = { document: documentOf(file) };
  await activate({ path: pipec, 'build.target': 'kfp-v2', 'build.kind': 'workflow' }, { documentFormattingProvider: true });
  assert.deepStrictEqual([...seen.commands.keys()].sort(), manifest.contributes.commands.map((c) => c.command).sort());
  assert.strictEqual(seen.clients.length, 1);
  assert.deepStrictEqual(seen.clients[0].server, { command: pipec, args: ['lsp'], options: { cwd: work } });
  assert.deepStrictEqual(seen.clients[0].client.documentSelector.map((s) => s.language), ['pipe', 'pipe']);
  assert.strictEqual(seen.formatters.length, 0, 'the server formats');

  // Check: pipec check with the configured target; fine.
  await seen.commands.get('pipec.check')();
  assert.ok(seen.output.includes(`$ pipec check ${file} --target kfp-v2`), seen.output);
  assert.deepStrictEqual(seen.messages, [['info', 'pipec check: hello.pipe is fine']]);

  // Build: the configured target offered first; kfp-v1 picked, then a workflow template.
  answers = ['kfp-v1', 'workflow-template'];
  await seen.commands.get('pipec.build')();
  assert.deepStrictEqual(seen.picks[0], ['kfp-v2', 'kfp-v1']);
  assert.deepStrictEqual(seen.picks[1], ['workflow', 'workflow-template', 'cron-workflow']);
  assert.match(fs.readFileSync(path.join(work, 'hello.yaml'), 'utf8'), /kind: WorkflowTemplate/);
  // A cron workflow asks for its schedule.
  answers = ['kfp-v1', 'cron-workflow', '0 3 * * *'];
  await seen.commands.get('pipec.build')();
  assert.match(fs.readFileSync(path.join(work, 'hello.yaml'), 'utf8'), /kind: CronWorkflow[\s\S]*0 3 \* \* \*/);

  // The graph: a panel whose page holds the SVG as an image.
  await seen.commands.get('pipec.showGraph')();
  assert.strictEqual(seen.panels.length, 1);
  const svg = cp.execFileSync(pipec, ['graph', file, '--format', 'svg'], { encoding: 'utf8' });
  assert.ok(seen.panels[0].webview.html.includes(Buffer.from(svg).toString('base64')));

  // Run locally: pipec itself in a terminal, no shell between.
  await seen.commands.get('pipec.runLocal')();
  assert.deepStrictEqual(seen.terminals.map((t) => [t.shellPath, t.shellArgs, t.cwd]), [[pipec, ['run', '--local', file], work]]);

  // A pipec.path that names nothing: an error naming the setting, no client; commands say so again.
  await activate({ path: path.join(work, 'nothing') }, {});
  assert.strictEqual(seen.clients.length, 0);
  assert.match(seen.messages[0][1], /^pipec\.path is '.*nothing', which is not an executable file/);
  await seen.commands.get('pipec.check')();
  assert.strictEqual(seen.messages.length, 2);

  // A server that does not format: the extension formats with `pipec fmt -`.
  await activate({ path: pipec }, {});
  assert.strictEqual(seen.formatters.length, 1);
  const edits = await seen.formatters[0].provideDocumentFormattingEdits(documentOf(file));
  const formatted = cp.execFileSync(pipec, ['fmt', file], { encoding: 'utf8' });
  assert.notStrictEqual(formatted, messy);
  assert.deepStrictEqual(edits, [{ range: new vscode.Range({ line: 0, character: 0 }, { line: 8, character: 0 }), newText: formatted }]);
  console.log('ok');
}

main().catch((e) => {
  console.error('FAIL:', e);
  process.exit(1);
});
