// The .vsix that `vsce package` made (CTest vscode.vsix, from editors/vscode): its manifest
// and files, read from the zip itself.
//  * extension/package.json: activation on the `pipe` language, `.pipe` files; the commands it
//    contributes are exactly those src/extension.js registers (and the menus name only those);
//    the settings pipec.path, pipec.build.target and .kind (their choices as launch.js's);
//    formatting on save for `[pipe]`;
//  * every path the manifest names is in the package: main, the language configuration, the
//    grammar (which parses, with scopeName source.pipe), the snippets;
//  * the language client is in it with its dependencies, the test and packaging tools not;
//  * extension.vsixmanifest names the same id, publisher and version.
//
// usage: node package_test.js VSIX
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');

const extension = path.resolve(__dirname, '../../editors/vscode');
const yauzl = require(require.resolve('yauzl', { paths: [extension] }));
const launch = require(path.join(extension, 'src/launch.js'));
const vsix = process.argv[2];

// The entries of the zip: name -> contents.
function readZip(file) {
  return new Promise((resolve, reject) => {
    const files = new Map();
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      zip.on('entry', (entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const chunks = [];
          stream.on('data', (c) => chunks.push(c));
          stream.on('end', () => { files.set(entry.fileName, Buffer.concat(chunks)); zip.readEntry(); });
        });
      });
      zip.on('end', () => resolve(files));
      zip.readEntry();
    });
  });
}

async function main() {
  const files = await readZip(vsix);
  const inside = (p) => `extension/${path.posix.normalize(p).replace(/^\.\//, '')}`;
  const text = (p) => {
    assert.ok(files.has(inside(p)), `${p} is not in the package`);
    return files.get(inside(p)).toString('utf8');
  };
  const pkg = JSON.parse(text('package.json'));
  const c = pkg.contributes;

  assert.ok(pkg.activationEvents.includes('onLanguage:pipe'), 'activates on .pipe files');
  assert.deepStrictEqual(c.languages.map((l) => [l.id, l.extensions]), [['pipe', ['.pipe']]]);
  assert.ok(pkg.engines.vscode, 'engines.vscode');

  // Commands: the contributed ones are the registered ones.
  const registered = [...text(pkg.main).matchAll(/command\('(pipec\.[A-Za-z]+)'/g)].map((m) => m[1]).sort();
  const contributed = c.commands.map((x) => x.command).sort();
  assert.deepStrictEqual(contributed, registered);
  for (const want of ['pipec.check', 'pipec.build', 'pipec.runLocal', 'pipec.showGraph'])
    assert.ok(contributed.includes(want), `no command ${want}`);
  for (const list of Object.values(c.menus))
    for (const m of list) assert.ok(contributed.includes(m.command), `menu names ${m.command}`);

  // Settings.
  const props = c.configuration.properties;
  assert.strictEqual(props['pipec.path'].default, '');
  assert.deepStrictEqual(props['pipec.build.target'].enum, launch.TARGETS);
  assert.deepStrictEqual(props['pipec.build.kind'].enum, launch.KINDS);
  assert.strictEqual(c.configurationDefaults['[pipe]']['editor.formatOnSave'], true);
  assert.strictEqual(c.configurationDefaults['[pipe]']['editor.defaultFormatter'], `${pkg.publisher}.${pkg.name}`);

  // The paths the manifest names.
  const languageConfiguration = JSON.parse(text(c.languages[0].configuration));
  assert.deepStrictEqual(languageConfiguration.comments, { lineComment: '#' });
  assert.strictEqual(c.grammars.length, 1);
  const grammar = JSON.parse(text(c.grammars[0].path));
  assert.strictEqual(grammar.scopeName, c.grammars[0].scopeName);
  assert.strictEqual(grammar.scopeName, 'source.pipe');
  assert.strictEqual(c.grammars[0].embeddedLanguages['meta.embedded.block.python'], 'python');
  const snippets = JSON.parse(text(c.snippets[0].path));
  for (const want of ['op', 'training step', 'trainer v2 step', 'pipeline', 'for', 'finally']) assert.ok(snippets[want], `no snippet '${want}'`);
  text('src/launch.js');
  text('README.md');
  assert.match(text('LICENSE.txt'), /Apache License/);

  // The client and what it needs; no development tool.
  for (const dep of ['vscode-languageclient', 'vscode-languageserver-protocol', 'vscode-jsonrpc', 'vscode-languageserver-types']) {
    const meta = JSON.parse(text(`node_modules/${dep}/package.json`));
    const main = meta.main.replace(/\.js$/, '') + '.js';
    text(`node_modules/${dep}/${main}`);
  }
  text('node_modules/vscode-languageclient/node.js');
  for (const tool of ['@vscode/vsce', 'vscode-textmate', 'vscode-oniguruma', 'yauzl'])
    assert.ok(![...files.keys()].some((f) => f.startsWith(`extension/node_modules/${tool}/`)), `${tool} is in the package`);

  const manifest = files.get('extension.vsixmanifest').toString('utf8');
  assert.match(manifest, new RegExp(`<Identity [^>]*Id="${pkg.name}"[^>]*Version="${pkg.version.replace(/\./g, '\\.')}"[^>]*Publisher="${pkg.publisher}"`));
  console.log(`ok: ${path.basename(vsix)}, ${fs.statSync(vsix).size} bytes, ${files.size} files`);
}

main().catch((e) => {
  console.error('FAIL:', e.message || e);
  process.exit(1);
});
