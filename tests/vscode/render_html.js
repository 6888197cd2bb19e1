// A .pipe file as HTML, highlighted with the extension's grammar through vscode-textmate and
// the colours of VS Code's Dark+ theme for the scopes the grammar uses: what VS Code shows,
// for docs/vscode-highlighting.png (a headless Chromium screenshot of the page, docs/lsp.md).
//
// With DIAGNOSTICS (what `pipec check --diagnostics=json FILE.pipe` prints, the diagnostics
// the extension's language client receives), each error's range is underlined with a wavy
// line and its message shown at the end of its line, as VS Code shows them with an
// inline-diagnostics extension: docs/vscode-diagnostic.png.
//
// usage: node render_html.js FILE.pipe OUT.html [DIAGNOSTICS.jsonl]
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
  const [input, out, diagnostics] = process.argv.slice(2);
  const grammar = await loadGrammar();
  const esc = (s) => s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' }[c]));
  // line number (1-based) -> [{from, to, message}], columns 0-based
  const marks = new Map();
  if (diagnostics) {
    for (const text of fs.readFileSync(diagnostics, 'utf8').split('\n').filter((l) => l.trim())) {
      const d = JSON.parse(text);
      const at = d.location;
      const hint = (d.notes || []).map((n) => n.message).join('; ');
      const list = marks.get(at.line) || [];
      list.push({ from: at.column - 1, to: Math.max(at.column, at.end_line === at.line ? at.end_column - 1 : Infinity),
                  message: d.message + (hint ? ` (${hint})` : '') });
      marks.set(at.line, list);
    }
  }
  let state = textmate.INITIAL;
  const lines = fs.readFileSync(input, 'utf8').replace(/\n$/, '').split('\n').map((line, i) => {
    const r = grammar.tokenizeLine(line, state);
    state = r.ruleStack;
    const here = marks.get(i + 1) || [];
    const wavy = (c) => here.some((m) => c >= m.from && c < m.to);
    // Runs of characters of one colour and one underlining.
    const pieces = [];
    for (const t of r.tokens) {
      const colour = match(t.scopes);
      for (let c = t.startIndex; c < Math.min(t.endIndex, line.length); ++c) {
        const last = pieces[pieces.length - 1];
        if (last && last.colour === colour && last.wavy === wavy(c)) last.text += line[c];
        else pieces.push({ colour, wavy: wavy(c), text: line[c] });
      }
    }
    const style = (p) => `color:${p.colour}` + (p.wavy ? ';text-decoration:underline wavy #F14C4C;text-underline-offset:3px' : '');
    const tail = here.map((m) => `<span style="color:#F14C4C;font-style:italic">    \u2716 ${esc(m.message)}</span>`).join('');
    return pieces.map((p) => `<span style="${style(p)}">${esc(p.text)}</span>`).join('') + tail;
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
