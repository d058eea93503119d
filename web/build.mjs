// npm run build: bundles the web app into dist/ (committed and embedded by the Go package, so
// building the harness binary needs no npm; code only some pages use, such as the QR decoder,
// goes into dist/assets/chunk-*.js, loaded when first needed; chunks of an older build are
// removed). npm run check: rebuilds in memory and fails when the
// committed files differ. testdata/sources.sha256 lets a Go test (TestBuildIsFresh) notice
// sources edited without a rebuild.
import * as esbuild from 'esbuild';
import { readFileSync, writeFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createHash } from 'node:crypto';

const check = process.argv.includes('--check');
const res = await esbuild.build({
  entryPoints: ['src/app.tsx'], bundle: true, write: false, format: 'esm', platform: 'browser', target: 'es2020',
  minify: true, legalComments: 'eof', charset: 'utf8', jsx: 'automatic', jsxImportSource: 'preact',
  splitting: true, outdir: 'dist/assets', entryNames: '[name]', chunkNames: 'chunk-[hash]',
});
const outputs = [...res.outputFiles.map((f) => [relative(process.cwd(), f.path), f.text]), ['dist/assets/app.css', readFileSync('src/app.css', 'utf8')], ['dist/index.html', readFileSync('src/index.html', 'utf8')]];
const chunks = new Set(outputs.map(([p]) => p).filter((p) => p.startsWith('dist/assets/chunk-')));
for (const f of readdirSync('dist/assets').map((f) => join('dist/assets', f)).filter((p) => p.startsWith('dist/assets/chunk-') && !chunks.has(p))) {
  if (check) { console.error(`${f}: left from an older build; run npm run build`); process.exitCode = 1; } else rmSync(f);
}
const inputs = ['build.mjs', 'package-lock.json', 'tsconfig.json', ...readdirSync('src', { recursive: true }).map((p) => join('src', String(p))).filter((p) => /\.(tsx?|css|html|json)$/.test(p)).sort()];
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
process.exit(stale || process.exitCode ? 1 : 0);
