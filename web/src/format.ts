// The web app's date and time formatters: the same rules, word for word, as
// package i18n of the host (FormatClock, FormatWeekday, FormatLocalDate,
// FormatLocalDateTime, FormatDay, FormatRelative, FormatCountdown), always in
// Beijing time (UTC+8, no daylight saving) whatever the browser's zone.
// web/testdata/format.golden.json, written by a Go test from package i18n,
// holds a table of instants that format.check.mjs (npm test) compares with
// these functions, so the two cannot drift apart.
export type Lang = 'zh-Hans' | 'en';

const bj = 8 * 3600 * 1000;
const dayMs = 86400000;
const weekdayZh = ['周日', '周一', '周二', '周三', '周四', '周五', '周六'];
const weekdayEn = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const monthEn = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// toMs reads an instant: Unix milliseconds, an RFC 3339 string or a Date; NaN when it is none.
export function toMs(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string' && v) return Date.parse(v);
  return NaN;
}

const wall = (ms: number) => new Date(ms + bj); // read with getUTC*: Beijing's wall clock
const pad = (n: number) => (n < 10 ? '0' : '') + n;
const pick = (l: Lang, zh: string, en: string) => (l === 'en' ? en : zh);

// formatClock: "21:04" in both languages.
export function formatClock(ms: number): string { const d = wall(ms); return pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()); }

// formatWeekday: "周一" / "Mon".
export function formatWeekday(ms: number, l: Lang): string { const w = wall(ms).getUTCDay(); return l === 'en' ? weekdayEn[w] : weekdayZh[w]; }

// formatLocalDate: "10月18日" / "Oct 18".
export function formatLocalDate(ms: number, l: Lang): string {
  const d = wall(ms);
  return l === 'en' ? monthEn[d.getUTCMonth()] + ' ' + d.getUTCDate() : d.getUTCMonth() + 1 + '月' + d.getUTCDate() + '日';
}

// formatLocalDateTime: "10月18日 21:04" / "Oct 18, 21:04".
export function formatLocalDateTime(ms: number, l: Lang): string { return formatLocalDate(ms, l) + (l === 'en' ? ', ' : ' ') + formatClock(ms); }

// dayDiff: Beijing calendar days from now's day to t's (1 = tomorrow).
const dayDiff = (t: number, now: number) => Math.floor((t + bj) / dayMs) - Math.floor((now + bj) / dayMs);

function dateNear(t: number, now: number, l: Lang): string {
  const y = wall(t).getUTCFullYear();
  if (y === wall(now).getUTCFullYear()) return formatLocalDate(t, l);
  return l === 'en' ? formatLocalDate(t, l) + ', ' + y : y + '年' + formatLocalDate(t, l);
}

// formatDay: 今天/明天/昨天 (Today/Tomorrow/Yesterday), the weekday within the coming week, else the date (with the year when not now's).
export function formatDay(t: number, now: number, l: Lang): string {
  const n = dayDiff(t, now);
  if (n === 0) return pick(l, '今天', 'Today');
  if (n === 1) return pick(l, '明天', 'Tomorrow');
  if (n === -1) return pick(l, '昨天', 'Yesterday');
  if (n > 1 && n < 7) return formatWeekday(t, l);
  return dateNear(t, now, l);
}

// formatRelative: "刚刚", "3 分钟前", "2 小时前", "昨天 21:04", "周三 21:04", "10月18日 21:04" and their future and English forms.
export function formatRelative(t: number, now: number, l: Lang): string {
  let d = now - t;
  const future = d < 0;
  if (future) d = -d;
  const days = dayDiff(t, now);
  if (d < 60000) return future ? pick(l, '马上', 'In a moment') : pick(l, '刚刚', 'Just now');
  if (d < 3600000) { const m = String(Math.floor(d / 60000)); return future ? pick(l, m + ' 分钟后', 'In ' + m + ' min') : pick(l, m + ' 分钟前', m + ' min ago'); }
  if (days === 0) { const h = String(Math.floor(d / 3600000)); return future ? pick(l, h + ' 小时后', 'In ' + h + ' h') : pick(l, h + ' 小时前', h + ' h ago'); }
  if (days === -1 || days === 1) return formatDay(t, now, l) + ' ' + formatClock(t);
  if (days > -7 && days < 7) return formatWeekday(t, l) + ' ' + formatClock(t);
  return dateNear(t, now, l) + (l === 'en' ? ', ' : ' ') + formatClock(t);
}

// formatCountdown for a duration in ms: "2小时10分" / "2h 10m", "1天3小时" / "1d 3h", "不到1分" / "<1m", "0分" / "0m".
export function formatCountdown(d: number, l: Lang): string {
  if (d <= 0) return pick(l, '0分', '0m');
  if (d < 60000) return pick(l, '不到1分', '<1m');
  const mins = Math.floor(d / 60000);
  const days = Math.floor(mins / 1440), hours = Math.floor(mins / 60) % 24, m = mins % 60;
  const zh: string[] = [], en: string[] = [];
  if (days > 0) {
    zh.push(days + '天'); en.push(days + 'd');
    if (hours > 0) { zh.push(hours + '小时'); en.push(hours + 'h'); }
  } else {
    if (hours > 0) { zh.push(hours + '小时'); en.push(hours + 'h'); }
    if (m > 0) { zh.push(m + '分'); en.push(m + 'm'); }
  }
  return pick(l, zh.join(''), en.join(' '));
}
