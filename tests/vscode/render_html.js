// A .pipe file as HTML, highlighted with the extension's grammar through vscode-textmate and
// the colours of VS Code's Dark+ theme for the scopes the grammar uses: what VS Code shows,
// for docs/vscode-highlighting.png (a headless Chromium screenshot of the page, docs/lsp.md).
//
// usage: node render_html.js FILE.pipe OUT.html
'use strict';
const fs = require('fs');
const path = require('path');
const { loadGrammar, extension } = require('./tokenize');

const textmate = require(require.resolve('vscode-textmate', { paths: [extension] }));
// Dark+ (VS Code's default dark theme): the colours of these scopes.
const theme = [
  ['comment', '#6A9955'], ['string', '#CE9178'], ['constant.character.escape', '#D7BA7D'],
  ['constant.numeric', '#B5CEA8'], ['constant.language', '#569CD6'], ['keyword', '#C586C0'],
  ['keyword.operator', '#D4D4D4'], ['keyword.operator.logical', '#569CD6'], ['storage.type', '#569CD6'],
  ['support.type.primitive', '#4EC9B0'], ['entity.name.type', '#4EC9B0'], ['entity.name.function', '#DCDCAA'],
  ['entity.name.namespace', '#4EC9B0'], ['variable', '#9CDCFE'], ['support.type.property-name', '#9CDCFE'],
  ['punctuation.section.interpolation', '#569CD6'], ['meta.interpolation variable', '#9CDCFE'],
  ['markup.inline.raw', '#CE9178'], ['entity.name.tag', '#569CD6'], ['meta.embedded', '#D4D4D4'],
  ['punctuation.definition.raw', '#D7BA7D'], ['invalid', '#F44747'],
];
const match = (scopes) => {
  let best = null;
  for (const [selector, colour] of theme) {
    const parts = selector.split(' ');
    let i = 0;
    for (const s of scopes) if (i < parts.length && (s === parts[i] || s.startsWith(parts[i] + '.'))) ++i;
    if (i === parts.length && (!best || selector.length >= best[0].length)) best = [selector, colour];
  }
  return best ? best[1] : '#D4D4D4';
};

async function main() {
  const [input, out] = process.argv.slice(2);
  const grammar = await loadGrammar();
  const esc = (s) => s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' }[c]));
  let state = textmate.INITIAL;
  const lines = fs.readFileSync(input, 'utf8').replace(/\n$/, '').split('\n').map((line) => {
    const r = grammar.tokenizeLine(line, state);
    state = r.ruleStack;
    return r.tokens.map((t) => `<span style="color:${match(t.scopes)}">${esc(line.slice(t.startIndex, t.endIndex))}</span>`).join('');
  });
  fs.writeFileSync(out, `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>${esc(path.basename(input))}</title>
<style>body { margin: 0; background: #1E1E1E; } pre { margin: 0; padding: 14px 18px; font: 14px/1.45 'DejaVu Sans Mono', monospace; color: #D4D4D4; }</style>
</head><body><pre>${lines.join('\n')}</pre></body></html>
`);
}

main().catch((e) => {
  console.error('FAIL:', e.message || e);
  process.exit(1);
});
