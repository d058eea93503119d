// The app's strings in zh-Hans and English (a Go test fails when a key is
// missing in either), the language choice (follow the browser, 简体中文,
// English) and the theme (light, dark, system), both kept in localStorage.
import { signal, computed } from '@preact/signals';
import zh from './strings/zh-Hans.json';
import en from './strings/en.json';

export type Key = keyof typeof zh;
export type LangChoice = 'system' | 'zh-Hans' | 'en';
export type ThemeChoice = 'system' | 'light' | 'dark';

const tables: Record<'zh-Hans' | 'en', Record<string, string>> = { 'zh-Hans': zh, en };

export const langChoice = signal<LangChoice>((localStorage.getItem('harness.lang') as LangChoice) || 'system');
export const themeChoice = signal<ThemeChoice>((localStorage.getItem('harness.theme') as ThemeChoice) || 'system');

function browserLang(): 'zh-Hans' | 'en' {
  for (const l of navigator.languages || [navigator.language]) {
    if (/^zh/i.test(l)) return 'zh-Hans';
    if (/^en/i.test(l)) return 'en';
  }
  return 'zh-Hans';
}

// browserLangs follows the browser's language list, so "follow the browser" follows a change of it
// without a reload.
const browserLangs = signal(0);
window.addEventListener('languagechange', () => { browserLangs.value++; });

export const locale = computed<'zh-Hans' | 'en'>(() => (langChoice.value === 'system' ? (void browserLangs.value, browserLang()) : langChoice.value));

export function setLang(c: LangChoice) { langChoice.value = c; localStorage.setItem('harness.lang', c); applyDoc(); }
export function setTheme(c: ThemeChoice) { themeChoice.value = c; localStorage.setItem('harness.theme', c); applyDoc(); }

export function applyDoc() {
  document.documentElement.lang = locale.value;
  const d = document.documentElement.dataset;
  if (themeChoice.value === 'system') delete d.theme; else d.theme = themeChoice.value;
}

// t looks a key up in the viewer's language; {name} placeholders are filled from vars.
export function t(key: Key, vars?: Record<string, string | number>): string {
  let s = tables[locale.value][key] ?? tables['zh-Hans'][key] ?? key;
  if (vars) for (const k in vars) s = s.split('{' + k + '}').join(String(vars[k]));
  return s;
}
