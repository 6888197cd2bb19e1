// Tokenizes .pipe text with the extension's TextMate grammar (editors/vscode/syntaxes), through
// vscode-textmate and vscode-oniguruma, VS Code's own engine (npm, in editors/vscode's
// devDependencies): what VS Code shows is what the tests see.
'use strict';
const fs = require('fs');
const path = require('path');

const extension = path.resolve(__dirname, '../../editors/vscode');
const need = (name) => require(require.resolve(name, { paths: [extension] }));
const textmate = need('vscode-textmate');
const oniguruma = need('vscode-oniguruma');

// The grammar of source.pipe. The languages it embeds (source.python, source.shell: VS Code's
// own grammars) are stand-ins without rules, so their text keeps the embedding scope
// (meta.embedded.block.*); vscode-textmate drops a rule whose include names no grammar at all.
async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm', { paths: [extension] }));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => {
      if (scope === 'source.python' || scope === 'source.shell') return { scopeName: scope, patterns: [] };
      if (scope !== 'source.pipe') return null;
      const file = path.join(extension, 'syntaxes', 'pipe.tmLanguage.json');
      return textmate.parseRawGrammar(fs.readFileSync(file, 'utf8'), file);
    },
  });
  return registry.loadGrammar('source.pipe');
}

// The tokens of each line of `text`: [{line, start, end, text, scopes}], scopes from the root.
// Lines end at LF, CRLF or a lone CR, as the lexer's do.
function tokenize(grammar, text) {
  const out = [];
  let state = textmate.INITIAL;
  text.split(/\r\n|\r|\n/).forEach((line, i) => {
    const r = grammar.tokenizeLine(line, state);
    for (const t of r.tokens) {
      const end = Math.min(t.endIndex, line.length);
      if (end > t.startIndex) out.push({ line: i + 1, start: t.startIndex, end, text: line.slice(t.startIndex, end), scopes: t.scopes });
    }
    state = r.ruleStack;
  });
  return out;
}

module.exports = { loadGrammar, tokenize, extension };
