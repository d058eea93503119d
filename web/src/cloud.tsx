// Settings → Cloud (seed 003 "PKU harness Cloud", "插件指南" §2): the provider URL (off by
// default) with "test connection" (GET /v1/meta through the host), and each plugin's consent
// panel: the provider host, the plugin's disclosure line by line, the E2E badge, the services
// used and the quota used, the allow switch, "clear this plugin's cloud data", and "delete all
// cloud data". The host API routes are in docs/HOST-API.md ("Cloud").
import { useEffect, useState } from 'preact/hooks';
import { signal } from '@preact/signals';
import { get, post, put, del, APIError } from './api';
import { t, locale } from './i18n';
import { Skeleton } from './genui';
import { say, errText } from './app';

// formatBytes writes a byte count in SI units as people read sizes: "0 B", "950 B", "1.5 kB",
// "1 MB" (1 MB = 1,000,000 bytes, as the provider's limits are given), at most one decimal.
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '?';
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  const s = i === 0 ? String(Math.round(n)) : (Math.round(n * 10) / 10).toString();
  return `${s} ${units[i]}`;
}

// The installed plugins' names (GET /v1/plugins: name, nameEn), so that a consent panel names a
// plugin as the person knows it; loaded once, again when a plugin is not in it yet.
const names = signal<Record<string, { name?: string; nameEn?: string }>>({});
let namesLoading = false;
function pluginName(id: string): string {
  const n = names.value[id];
  if (!n && !namesLoading) {
    namesLoading = true;
    get('/v1/plugins').then((r) => { const m: Record<string, any> = {}; for (const x of r.plugins || []) { const pl = x.plugin || x; if (pl?.id) m[pl.id] = { name: pl.name, nameEn: pl.nameEn }; } names.value = m; }).catch(() => {});
  }
  return (locale.value === 'en' && n?.nameEn) || n?.name || id;
}

export function CloudSettings() {
  const [rep, setRep] = useState<any>(null);
  const [url, setUrl] = useState('');
  const [meta, setMeta] = useState<any>(null);
  const [busy, setBusy] = useState(false);
  const load = () => get('/v1/cloud').then((r) => { setRep(r); if (r?.status?.baseURL) setUrl(r.status.baseURL); }).catch((e) => say(errText(e)));
  useEffect(() => { load(); }, []);
  const run = async (f: () => Promise<any>, done?: string) => {
    setBusy(true);
    try { const r = await f(); if (done) say(done); return r; } catch (e) { say(errText(e)); } finally { setBusy(false); }
  };
  const test = () => run(async () => { setMeta(null); const m = await post('/v1/cloud/test', { url: url.trim() }); setMeta(m); return m; }, t('cloud.testOk'));
  const save = () => run(async () => { const r = await put('/v1/cloud', { url: url.trim() || 'off' }); setRep(r); return r; }, t('cloud.saved'));
  const off = () => run(async () => { const r = await put('/v1/cloud', { url: 'off' }); setRep(r); setUrl(''); setMeta(null); return r; }, t('cloud.turnedOff'));
  const forgetAll = () => { if (window.confirm(t('cloud.deleteAllAsk'))) run(async () => { const r = await del('/v1/cloud/data'); setRep(r); return r; }, t('cloud.deletedAll')); };
  const st = rep?.status;
  return (
    <section aria-labelledby="cloud-h" id="cloud"><h2 id="cloud-h">{t('cloud.title')}</h2>
      {!rep ? <Skeleton rows={2} /> : <p class="detail" role="status">{st?.provider === 'off' ? t('cloud.off') : t('cloud.using', { url: st?.baseURL || '', state: st?.online ? t('cloud.online') : t('cloud.offline') })}</p>}
      <form class="g-row gap-sm wrap" onSubmit={(e) => { e.preventDefault(); save(); }}>
        <label for="cloud-url" class="sr-only">{t('cloud.url')}</label>
        <input id="cloud-url" type="url" inputMode="url" autocomplete="off" placeholder="https://cloud.example.org" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
        <button type="button" disabled={busy || !url.trim()} onClick={test}>{t('cloud.test')}</button>
        <button type="submit" disabled={busy || !url.trim()}>{t('cloud.save')}</button>
        {st && st.provider !== 'off' ? <button type="button" disabled={busy} onClick={off}>{t('cloud.turnOff')}</button> : null}
      </form>
      {meta ? <p class="detail">{t('cloud.meta', { host: meta.host, services: (meta.services || []).join(', '), keys: meta.limits?.store?.maxKeys ?? 0, bytes: formatBytes(meta.limits?.store?.maxBytes ?? 0) })}</p> : null}
      <h3>{t('cloud.plugins')}</h3>
      {!rep ? <Skeleton rows={2} /> : !rep.plugins?.length ? <p class="detail">{t('cloud.noPlugins')}</p> : (
        <ul class="rows">{rep.plugins.map((p: any) => <li><ConsentPanel p={p} busy={busy} run={run} onChange={load} /></li>)}</ul>
      )}
      {st && st.provider !== 'off' ? <button type="button" class="destructive" disabled={busy} onClick={forgetAll}>{t('cloud.deleteAll')}</button> : null}
    </section>
  );
}

// PluginCloud is the Cloud block of a plugin's page (seed 003 "插件指南" §2: the plugin's
// details show the same consent panel).
export function PluginCloud({ id }: { id: string }) {
  const [p, setP] = useState<any>(null);
  const [busy, setBusy] = useState(false);
  const load = () => get(`/v1/cloud/plugins/${encodeURIComponent(id)}/consent`).then(setP).catch(() => setP(null));
  useEffect(() => { load(); }, [id]);
  const run = async (f: () => Promise<any>, done?: string) => {
    setBusy(true);
    try { const r = await f(); if (done) say(done); return r; } catch (e) { say(errText(e)); } finally { setBusy(false); }
  };
  if (!p) return null;
  return (
    <section aria-labelledby="pcloud-h"><h2 id="pcloud-h">{t('cloud.title')}</h2>
      <ConsentPanel p={p} busy={busy} run={run} onChange={load} />
    </section>
  );
}

function ConsentPanel({ p, busy, run, onChange }: { p: any; busy: boolean; run: (f: () => Promise<any>, done?: string) => Promise<any>; onChange: () => void }) {
  const id = encodeURIComponent(p.plugin);
  const lines: string[] = locale.value === 'en' && p.disclosureEn?.length === p.disclosureZh?.length ? p.disclosureEn : p.disclosureZh || [];
  const name = pluginName(p.plugin);
  const toggle = (on: boolean) => run(() => (on ? put(`/v1/cloud/plugins/${id}/consent`, { actor: 'user' }) : del(`/v1/cloud/plugins/${id}/consent`)), on ? t('cloud.allowedNow', { name }) : t('cloud.revokedNow', { name })).then(onChange);
  const clear = () => { if (window.confirm(t('cloud.clearAsk', { name }))) run(() => del(`/v1/cloud/plugins/${id}/data`), t('cloud.cleared', { name })).then(onChange); };
  const u = p.usage || {};
  return (
    <div class="cloud-panel g-col gap-sm" data-plugin={p.plugin}>
      <div class="row"><span class="name">{name}{name !== p.plugin ? <small class="plugin-id">{p.plugin}</small> : null}<small>{p.provider ? t('cloud.provider', { host: p.provider }) : t('cloud.noProvider')}</small></span>
        <span class={`badge ${p.e2e ? 'official' : 'warn'}`}>{p.e2e ? t('cloud.e2e') : t('cloud.notE2e')}</span></div>
      <p class="detail">{t('cloud.disclosure')}</p>
      <ul class="disclosure">{lines.map((l) => <li>{l}</li>)}</ul>
      {p.backend ? <p class="detail">{t('cloud.backend', { url: p.backend })}</p> : null}
      <p class="detail">{t('cloud.uses', { services: (p.uses || []).join(', ') })} · {t(u.keysFrom === 'provider' ? 'cloud.quota' : 'cloud.quotaMirror', { keys: u.keys ?? 0, maxKeys: u.maxKeys ?? 0, bytes: formatBytes(u.bytes ?? 0), maxBytes: formatBytes(u.maxBytes ?? 0) })}</p>
      {p.functions?.length ? <p class="detail">{t('cloud.functions', { names: p.functions.join(', ') })}</p> : null}
      {p.consented && !p.status?.available && p.status?.reason ? <p class="detail" role="note">{t('cloud.unavailable', { reason: why(p) })}</p> : null}
      <div class="g-row gap-sm wrap">
        <label class="g-row gap-sm allow"><input type="checkbox" checked={!!p.consented} disabled={busy || !p.provider} onChange={(e) => toggle((e.target as HTMLInputElement).checked)} />{t('cloud.allow')}</label>
        <button type="button" disabled={busy || !p.provider} onClick={clear}>{t('cloud.clear')}</button>
      </div>
    </div>
  );
}

// why says in the viewer's language why a plugin's Cloud is unavailable (status.why), the
// host's English reason for a code this app does not know.
function why(p: any): string {
  const st = p.status || {};
  switch (st.why) {
    case 'no_provider': return t('cloud.noProvider');
    case 'offline': return t('cloud.offline');
    case 'not_offered': return t('cloud.notOffered', { host: p.provider || '', services: (st.missing || []).join(', ') });
  }
  return st.reason || '';
}

// --- requestConsent() (seed 003 "插件指南" §2) ---
// A tool the person ran from a screen that needs Cloud consent fails with consent_required (or
// unavailable when no provider is set) and the host's request { plugin, provider, … } in
// `consent`. The app shows the same consent panel as Settings → Cloud over the page; the host
// never grants by itself: only the person's switch in that panel does. requestConsent resolves
// true once the plugin is allowed, false when the person closes the panel without allowing.
interface Ask { plugin: string; provider: string; panel?: string; settings?: string; command?: string }
const asking = signal<{ ask: Ask; done: (ok: boolean) => void } | null>(null);

export function consentAsk(e: unknown): Ask | null {
  const c = e instanceof APIError ? e.body?.consent : null;
  return c && typeof c.plugin === 'string' && /^[a-z0-9][a-z0-9-]{1,63}$/.test(c.plugin) ? c : null;
}

export function requestConsent(ask: Ask): Promise<boolean> {
  asking.value?.done(false);
  return new Promise((resolve) => {
    asking.value = { ask, done: (ok) => { asking.value = null; resolve(ok); } };
  });
}

export function ConsentDialog() {
  const a = asking.value;
  const [p, setP] = useState<any>(null);
  const [busy, setBusy] = useState(false);
  const id = a ? encodeURIComponent(a.ask.plugin) : '';
  const load = () => get(`/v1/cloud/plugins/${id}/consent`).then((r) => { setP(r); if (r?.consented) a?.done(true); }).catch((e) => { say(errText(e)); a?.done(false); });
  useEffect(() => { setP(null); if (a) load(); }, [a]);
  useEffect(() => {
    if (!a) return;
    const esc = (e: KeyboardEvent) => { if (e.key === 'Escape') a.done(false); };
    window.addEventListener('keydown', esc);
    return () => window.removeEventListener('keydown', esc);
  }, [a]);
  if (!a) return null;
  const run = async (f: () => Promise<any>, done?: string) => {
    setBusy(true);
    try { const r = await f(); if (done) say(done); return r; } catch (e) { say(errText(e)); } finally { setBusy(false); }
  };
  return (
    <div class="sheet consent-ask" role="dialog" aria-modal="true" aria-labelledby="consent-ask-h">
      <h2 id="consent-ask-h">{t('cloud.askTitle', { name: pluginName(a.ask.plugin) })}</h2>
      <p class="detail">{a.ask.provider ? t('cloud.askText', { name: pluginName(a.ask.plugin), host: a.ask.provider }) : t('cloud.askSetup', { name: pluginName(a.ask.plugin) })}</p>
      {!p ? <Skeleton rows={2} /> : <ConsentPanel p={p} busy={busy} run={run} onChange={load} />}
      <div class="g-row gap-sm wrap">
        {!a.ask.provider ? <a class="btn" href="/settings/cloud" onClick={() => a.done(false)}>{t('cloud.askSettings')}</a> : null}
        <button type="button" onClick={() => a.done(false)}>{t('cloud.askLater')}</button>
      </div>
    </div>
  );
}
