// npm test: bundles src/format.ts with esbuild and checks it against
// testdata/format.golden.json, the strings package i18n of the host gives on
// the same instants (written by go test ./web -run TestFormatGolden -update).
// Runs with TZ set far from Beijing so that the browser's zone cannot leak in.
import * as esbuild from 'esbuild';
import { readFileSync } from 'node:fs';

process.env.TZ = 'America/Los_Angeles';
const res = await esbuild.build({ entryPoints: ['src/format.ts'], bundle: true, write: false, format: 'esm', platform: 'neutral' });
const f = await import('data:text/javascript;base64,' + Buffer.from(res.outputFiles[0].text).toString('base64'));
const rows = JSON.parse(readFileSync('testdata/format.golden.json', 'utf8'));
let bad = 0;
for (const r of rows) {
  const got = {
    clock: f.formatClock(r.t), weekday: f.formatWeekday(r.t, r.lang), localDate: f.formatLocalDate(r.t, r.lang),
    localDateTime: f.formatLocalDateTime(r.t, r.lang), day: f.formatDay(r.t, r.now, r.lang),
    relative: f.formatRelative(r.t, r.now, r.lang), countdown: f.formatCountdown(r.t - r.now, r.lang),
  };
  for (const k of Object.keys(got)) {
    if (got[k] !== r[k]) {
      if (bad++ < 20) console.error(`t=${r.t} now=${r.now} ${r.lang} ${k}: web ${JSON.stringify(got[k])}, i18n ${JSON.stringify(r[k])}`);
    }
  }
}
if (bad) { console.error(`${bad} of ${rows.length * 7} formatted strings differ from package i18n`); process.exit(1); }
console.log(`${rows.length} instants × 7 formatters: the web app's formatters agree with package i18n`);
