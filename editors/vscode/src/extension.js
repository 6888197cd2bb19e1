// The VS Code side: starts `pipec lsp` (launch.js says how) with vscode-languageclient, and
// adds the commands check, build, run locally and show the graph, and formatting through
// `pipec fmt` when the server does not format.
'use strict';
const cp = require('child_process');
const path = require('path');
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');
const launch = require('./launch');

let client = null;
let output = null;
let pipec = null;      // the checked executable
let fallback = null;   // the `pipec fmt` formatter, when the server has none
const graphs = new Map();  // file -> its graph panel

function settings() {
  const c = vscode.workspace.getConfiguration('pipec');
  return { path: c.get('path'), target: c.get('build.target'), kind: c.get('build.kind') };
}

function workspaceFolder() {
  const folders = vscode.workspace.workspaceFolders;
  return folders && folders.length > 0 ? folders[0].uri.fsPath : undefined;
}

// The pipec to use, or null after saying why (with a button to the setting; the message
// is not waited for).
function findPipec() {
  const r = launch.checkPipec(settings(), process.env, workspaceFolder());
  if (r.ok) return r.command;
  vscode.window.showErrorMessage(r.message, 'Open Settings').then((choice) => {
    if (choice) vscode.commands.executeCommand('workbench.action.openSettings', 'pipec.path');
  });
  return null;
}

async function start(context) {
  pipec = findPipec();
  if (!pipec) return;
  const server = launch.serverOptions(pipec, workspaceFolder());
  client = new LanguageClient('pipec', 'pipec language server', server,
    { documentSelector: launch.documentSelector, outputChannel: output });
  try {
    await client.start();
  } catch (e) {
    vscode.window.showErrorMessage(`pipec lsp did not start: ${e.message || e}`);
    client = null;
    return;
  }
  const caps = client.initializeResult && client.initializeResult.capabilities;
  if (!(caps && caps.documentFormattingProvider)) {
    fallback = vscode.languages.registerDocumentFormattingEditProvider({ language: 'pipe' }, { provideDocumentFormattingEdits: fmt });
    context.subscriptions.push(fallback);
  }
}

async function stop() {
  if (fallback) fallback.dispose();
  fallback = null;
  if (client) await client.stop();
  client = null;
}

// Runs pipec with `args` (and `input` on standard input; else none): {status, stdout, stderr}.
function run(args, cwd, input) {
  return new Promise((resolve) => {
    const child = cp.spawn(pipec, args, { cwd, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', (e) => resolve({ status: -1, stdout, stderr: e.message }));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    if (input === undefined) return;
    // A pipec that exits before reading it all closes the pipe: its status says why.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

// `pipec fmt -` for a server without formatting: one edit of the whole text, none on error.
async function fmt(document) {
  const r = await run(launch.commands.fmt(), path.dirname(document.uri.fsPath), document.getText());
  if (r.status !== 0 || r.stdout === document.getText()) return [];
  const all = new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length));
  return [vscode.TextEdit.replace(all, r.stdout)];
}

// The .pipe file of the active editor, saved; null (with a message) when there is none, or
// no pipec that will do.
async function activeFile() {
  if (!pipec && !(pipec = findPipec())) return null;
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'pipe' || editor.document.isUntitled) {
    vscode.window.showWarningMessage('pipec: open a saved .pipe file first');
    return null;
  }
  if (editor.document.isDirty) await editor.document.save();
  return editor.document.uri.fsPath;
}

// Runs a command on the active file, its output in the pipec channel.
async function runShown(what, args, file) {
  output.appendLine(`$ pipec ${args.join(' ')}`);
  const r = await run(args, path.dirname(file));
  output.append(r.stdout + r.stderr);
  if (r.status === 0) vscode.window.showInformationMessage(`pipec ${what}: ${path.basename(file)} is fine`);
  else {
    output.show(true);
    vscode.window.showErrorMessage(`pipec ${what} failed (exit status ${r.status}): see the pipec output`);
  }
  return r;
}

async function check() {
  const file = await activeFile();
  if (file) await runShown('check', launch.commands.check(file, settings().target), file);
}

async function build() {
  const file = await activeFile();
  if (!file) return;
  const s = settings();
  const first = (list, x) => [x, ...list.filter((y) => y !== x)];  // the setting's choice on top
  const target = await vscode.window.showQuickPick(first(launch.TARGETS, s.target), { placeHolder: 'pipec build --target' });
  if (!target) return;
  let kind = 'workflow';
  let cron;
  if (target === 'kfp-v1') {
    kind = await vscode.window.showQuickPick(first(launch.KINDS, s.kind), { placeHolder: 'pipec build --kind' });
    if (!kind) return;
    if (kind === 'cron-workflow') {
      cron = await vscode.window.showInputBox({ prompt: 'When to run (cron, e.g. 0 2 * * *, or @daily)', value: '@daily' });
      if (!cron) return;
    }
  }
  await runShown('build', launch.commands.build(file, { target, kind, cron }), file);
}

async function runLocal() {
  const file = await activeFile();
  if (!file) return;
  const terminal = vscode.window.createTerminal({
    name: `pipec run --local ${path.basename(file)}`, shellPath: pipec, shellArgs: launch.commands.runLocal(file),
    cwd: path.dirname(file),
  });
  terminal.show();
}

async function drawGraph(file, panel) {
  const r = await run(launch.commands.graph(file), path.dirname(file));
  if (r.status !== 0) {
    output.append(r.stderr);
    output.show(true);
    vscode.window.showErrorMessage(`pipec graph failed (exit status ${r.status}): see the pipec output`);
    return;
  }
  panel.webview.html = launch.graphHtml(r.stdout, `graph of ${path.basename(file)}`);
}

async function showGraph() {
  const file = await activeFile();
  if (!file) return;
  let panel = graphs.get(file);
  if (!panel) {
    panel = vscode.window.createWebviewPanel('pipecGraph', `Graph: ${path.basename(file)}`, vscode.ViewColumn.Beside,
      { enableScripts: false });
    panel.onDidDispose(() => graphs.delete(file));
    graphs.set(file, panel);
  }
  panel.reveal(vscode.ViewColumn.Beside, true);
  await drawGraph(file, panel);
}

exports.activate = async (context) => {
  output = vscode.window.createOutputChannel('pipec');
  const command = (name, fn) => context.subscriptions.push(vscode.commands.registerCommand(name, fn));
  command('pipec.check', check);
  command('pipec.build', build);
  command('pipec.runLocal', runLocal);
  command('pipec.showGraph', showGraph);
  command('pipec.restartServer', async () => { await stop(); await start(context); });
  context.subscriptions.push(output, vscode.workspace.onDidSaveTextDocument((doc) => {
    const panel = graphs.get(doc.uri.fsPath);
    if (panel) drawGraph(doc.uri.fsPath, panel);
  }), vscode.workspace.onDidChangeConfiguration(async (e) => {
    if (e.affectsConfiguration('pipec.path')) { await stop(); await start(context); }
  }));
  await start(context);
};

exports.deactivate = () => stop();
