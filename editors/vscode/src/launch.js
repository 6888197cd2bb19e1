// What the extension runs, from its settings, without VS Code: the pipec it uses (pipec.path,
// else `pipec` on PATH) and whether that one will do (`pipec --version`), the language
// server's command line, and the command lines of the extension's commands. A plain module,
// so tests/vscode/client_test.js drives pipec with exactly these.
'use strict';
const cp = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

/// The oldest pipec whose `pipec lsp` this extension works with.
const MIN_VERSION = '0.1.0';

/// The targets and kinds `pipec build` writes (`pipec build --help`).
const TARGETS = ['kfp-v1', 'kfp-v2'];
const KINDS = ['workflow', 'workflow-template', 'cron-workflow'];

function executable(file) {
  try {
    return fs.statSync(file).isFile() && (fs.accessSync(file, fs.constants.X_OK), true);
  } catch {
    return false;
  }
}

/// The executable `setting` names: a path (`~` is the home folder; a relative one is taken
/// from `base`, the workspace folder), or a bare name looked up on PATH as a shell does; an
/// empty setting means `pipec`. null when there is none.
function resolvePipec(setting, env = process.env, base = process.cwd()) {
  let name = (setting || '').trim() || 'pipec';
  if (name === '~' || name.startsWith('~/')) name = path.join(os.homedir(), name.slice(1));
  if (name.includes('/')) return executable(path.resolve(base, name)) ? path.resolve(base, name) : null;
  for (const dir of (env.PATH || '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

/// [major, minor, patch] from `pipec --version`'s first line (`pipec 0.1.0 (commit ...)`).
function parseVersion(text) {
  const m = /^pipec (\d+)\.(\d+)\.(\d+)\b/.exec(String(text).trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

function older(a, b) {
  for (let i = 0; i < 3; ++i) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}

/// Whether the configured pipec will do: {ok: true, command, version} or {ok: false,
/// message} with a message that says what to change. `base`: the workspace folder.
function checkPipec(settings = {}, env = process.env, base = process.cwd()) {
  const setting = (settings.path || '').trim();
  const command = resolvePipec(setting, env, base);
  if (!command) {
    return {
      ok: false,
      message: setting
        ? `pipec.path is '${setting}', which is not an executable file: set it to the pipec executable`
        : "pipec was not found on PATH: install pipec (see pipec's README) or set pipec.path to the pipec executable",
    };
  }
  const r = cp.spawnSync(command, ['--version'], { encoding: 'utf8', timeout: 10000, env });
  const version = r.status === 0 ? parseVersion(r.stdout) : null;
  if (!version) {
    const said = (r.error ? r.error.message : (r.stdout || r.stderr || '').trim().split('\n')[0]) || `exit status ${r.status}`;
    return { ok: false, message: `${command} --version did not answer 'pipec VERSION' (${said}): is pipec.path pipec?` };
  }
  const min = parseVersion(`pipec ${MIN_VERSION}`);
  if (older(version, min)) {
    return {
      ok: false,
      message: `${command} is pipec ${version.join('.')}, too old for this extension: it needs pipec ${MIN_VERSION} or newer`,
    };
  }
  return { ok: true, command, version: version.join('.') };
}

/// The language server as vscode-languageclient's `Executable` describes it (stdio): the
/// command and arguments it spawns, and the folder it runs in.
function serverOptions(command, cwd) {
  return { command, args: ['lsp'], options: cwd ? { cwd } : {} };
}

/// The documents the server serves.
const documentSelector = [
  { scheme: 'file', language: 'pipe' },
  { scheme: 'untitled', language: 'pipe' },
];

/// The command lines of the extension's commands, for the file `file`.
const commands = {
  check: (file, target = 'kfp-v1') => ['check', file, '--target', target],
  build: (file, { target = 'kfp-v1', kind = 'workflow', cron, output } = {}) => {
    if (!TARGETS.includes(target)) throw new Error(`unknown target '${target}' (${TARGETS.join(', ')})`);
    if (!KINDS.includes(kind)) throw new Error(`unknown kind '${kind}' (${KINDS.join(', ')})`);
    const args = ['build', file, '--target', target];
    // --kind writes an Argo document: it goes with kfp-v1 only.
    if (target === 'kfp-v1' && kind !== 'workflow') args.push('--kind', kind);
    if (target === 'kfp-v1' && kind === 'cron-workflow') args.push('--cron', cron || '@daily');
    if (output) args.push('-o', output);
    return args;
  },
  runLocal: (file) => ['run', '--local', file],
  graph: (file) => ['graph', file, '--format', 'svg'],
  // `pipec fmt -`: the text on standard input, its layout on standard output.
  fmt: () => ['fmt', '-'],
};

/// The page of the graph panel: the SVG `pipec graph --format svg` drew, shown as an image
/// (a data: URI), so nothing of it runs; the page allows no script.
function graphHtml(svg, title) {
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const data = Buffer.from(svg, 'utf8').toString('base64');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>${esc(title)}</title>
<style>body { margin: 0; padding: 12px; background: #fff; } img { max-width: none; }</style>
</head><body><img alt="${esc(title)}" src="data:image/svg+xml;base64,${data}"></body></html>
`;
}

module.exports = {
  MIN_VERSION, TARGETS, KINDS, resolvePipec, parseVersion, checkPipec, serverOptions, documentSelector,
  commands, graphHtml,
};
