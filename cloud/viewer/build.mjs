// npm run build: bundles the viewer page into dist/ (committed and embedded by the Go package,
// so building the harness binary needs no npm) and the protocol vector check into testdata/.
// npm run check: rebuilds into memory and fails if the committed files differ.
import * as esbuild from 'esbuild';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createHash } from 'node:crypto';

const check = process.argv.includes('--check');
const common = { bundle: true, write: false, legalComments: 'eof', target: 'es2020', charset: 'utf8' };

const outputs = [];
const view = await esbuild.build({ ...common, entryPoints: ['src/view.js'], format: 'iife', platform: 'browser', minify: true, outfile: 'dist/demo/view/view.js' });
outputs.push(['dist/demo/view/view.js', view.outputFiles[0].text]);
const vectors = await esbuild.build({ ...common, entryPoints: ['test/vectors.mjs'], format: 'esm', platform: 'node', outfile: 'testdata/vectors-check.mjs' });
outputs.push(['testdata/vectors-check.mjs', vectors.outputFiles[0].text]);
outputs.push(['dist/demo/view/index.html', readFileSync('src/view.html', 'utf8')]);
outputs.push(['dist/demo/view/view.css', readFileSync('src/view.css', 'utf8')]);
const cardShare = await esbuild.build({ ...common, entryPoints: ['src/card-share/view.js'], format: 'iife', platform: 'browser', minify: true, outfile: 'dist/card-share/view/view.js' });
outputs.push(['dist/card-share/view/view.js', cardShare.outputFiles[0].text]);
outputs.push(['dist/card-share/view/index.html', readFileSync('src/card-share/view.html', 'utf8')]);
outputs.push(['dist/card-share/view/view.css', readFileSync('src/card-share/view.css', 'utf8')]);
// The inputs' hashes, so a Go test (TestBuildIsFresh) notices sources edited without a rebuild.
const inputs = ['build.mjs', 'package-lock.json', 'src/protocol.js', 'src/share.js', 'src/view.css', 'src/view.html', 'src/view.js',
  'src/card-share/view.css', 'src/card-share/view.html', 'src/card-share/view.js', 'test/vectors.mjs'];
outputs.push(['testdata/sources.sha256', inputs.map((p) => `${createHash('sha256').update(readFileSync(p)).digest('hex')}  ${p}\n`).join('')]);

let stale = 0;
for (const [path, text] of outputs) {
  if (check) {
    let old = '';
    try { old = readFileSync(path, 'utf8'); } catch {}
    if (old !== text) { console.error(`${path}: out of date; run npm run build`); stale++; }
    continue;
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  console.log(`${path}\t${Buffer.byteLength(text)} bytes`);
}
process.exit(stale ? 1 : 0);
