// The KFP 1.8 UI's own reading of a step's mlpipeline-ui-metadata: OutputArtifactLoader.load
// of kubeflow/pipelines' frontend (frontend/src/lib/OutputArtifactLoader.ts at TAG), taken
// from a clone of that repository and transpiled with TypeScript, as the UI runs it; only
// what it imports around the parsing is replaced (the metadata file's read returns FILE,
// React's base class, the logger). Prints {"configs": [viewer configs], "errors": [...]}.
//
//   node kfp_v1_frontend.js KFP_REPO TAG FILE
'use strict';
const fs = require('fs');
const { execFileSync } = require('child_process');
const ts = require('typescript');
const dsv = require('d3-dsv');

const [repo, tag, file] = process.argv.slice(2);
const errors = [];

function load(path, imports) {
  const text = execFileSync('git', ['-C', repo, 'show', `${tag}:${path}`], { encoding: 'utf8' });
  const js = ts.transpileModule(text, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2019, esModuleInterop: true },
  }).outputText;
  const module = { exports: {} };
  const require = name => {
    if (!(name in imports)) throw new Error(`${path} imports '${name}', which this test does not provide`);
    return imports[name];
  };
  new Function('require', 'module', 'exports', js)(require, module, module.exports);
  return module.exports;
}

const stub = fields => Object.assign({ __esModule: true }, fields);
const viewer = load('frontend/src/components/viewers/Viewer.ts', { react: stub({ Component: class {} }) });
const metadata = fs.readFileSync(file, 'utf8');
const loader = load('frontend/src/lib/OutputArtifactLoader.ts', {
  'd3-dsv': dsv,
  '../components/viewers/Viewer': viewer,
  '../lib/Apis': stub({ Apis: { readFile: async () => metadata } }),
  './Utils': stub({
    errorToMessage: async e => String(e),
    logger: { error: (...a) => errors.push(a.join(' ')), warn: (...a) => errors.push(a.join(' ')) },
  }),
  './WorkflowParser': stub({ default: { parseStoragePath: s => s } }),
  'src/third_party/mlmd': stub({}),
  '../apis/visualization': stub({ ApiVisualizationType: {} }),
  'src/mlmd/MlmdUtils': stub({}),
});
loader.OutputArtifactLoader.load({ source: 'minio', bucket: 'mlpipeline', key: 'ui-metadata.tgz' }, 'kubeflow')
  .then(configs => console.log(JSON.stringify({ configs, errors })))
  .catch(e => {
    console.log(JSON.stringify({ configs: null, errors: errors.concat([String(e)]) }));
  });
