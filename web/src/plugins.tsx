// Plugins and settings: the installed list, a plugin's page (tools and
// effects, permission modes, widgets, screens, settings rows, data
// sources, recent audit, update/accept/rollback/disable/remove), install
// (install.tsx: from a link, a QR code image or a remote plugin's URL, each
// through its review sheet), and Settings (language, theme, AI provider in
// provider.tsx, campus sign-in, the API token).
import { useEffect, useState } from 'preact/hooks';
import { get, post, put, del, callTool, setToken, token } from './api';
import { t, locale, langChoice, themeChoice, setLang, setTheme, Key } from './i18n';
import { Skeleton, Icon } from './genui';
import { say, errText, Link, go, effectName, toolTitle } from './app';
import { AIProvider } from './provider';
import { CloudSettings, PluginCloud } from './cloud';
import { formatRelative, formatLocalDateTime, toMs } from './format';

// word is the page language's word for an audit entry's actor or outcome (the host's code when
// the app has none for it).
const word = (prefix: string, code: unknown) => { const k = prefix + String(code ?? ''); const w = t(k as Key); return w === k ? String(code ?? '') : w; };

// AuditTime is an audit entry's time as package i18n writes it: relative within the week ("3 分钟前"), else the date and clock.
function AuditTime({ at }: { at: unknown }) {
  const ms = toMs(at);
  if (isNaN(ms)) return null;
  return <time dateTime={String(at)} title={formatLocalDateTime(ms, locale.value)}>{formatRelative(ms, Date.now(), locale.value)}</time>;
}


const kindKey = (k: string): Key => (k === 'builtin' ? 'kind.builtin' : k === 'remote' ? 'kind.remote' : 'kind.document');

export function Plugins() {
  const [list, setList] = useState<any[] | null>(null);
  const [remotes, setRemotes] = useState<any[]>([]);
  useEffect(() => {
    get('/v1/plugins').then((r) => setList(r.plugins || [])).catch((e) => say(errText(e)));
    get('/v1/remote-plugins').then((r) => setRemotes(r.remotes || r.plugins || [])).catch(() => {});
  }, []);
  return (
    <main id="main" tabIndex={-1}>
      <div class="page-head"><h1>{t('nav.plugins')}</h1><div class="actions wrap"><Link href="/install" class="btn">{t('plugins.install')}</Link><Link href="/install?remote" class="btn" id="add-remote">{t('remote.addTitle')}</Link></div></div>
      {!list ? <Skeleton rows={5} /> : (
        <ul class="rows">
          {list.map((p) => (
            <li><Link href={`/plugins/${encodeURIComponent(p.id)}`} class="row">
              <span class="name">{(locale.value === 'en' && p.nameEn) || p.name}<small>{p.id}</small></span>
              <span class="meta">
                <span class={`badge ${p.official ? 'official' : 'community'}`}>{t(p.official ? 'plugins.official' : 'plugins.community')}</span>
                <span class="badge">{t(kindKey(p.kind))}</span>
                {p.version ? <span class="badge">{p.version}</span> : null}
                {!p.enabled ? <span class="badge off">{t('plugins.disabled')}</span> : null}
                {p.held ? <span class="badge warn">{t('plugins.updateHeld', { version: p.held.version || '' })}</span> : null}
                {p.problem ? <span class="badge warn">{t('plugins.problem')}</span> : null}
              </span>
            </Link></li>
          ))}
          {remotes.filter((r) => !list.some((p) => p.id === r.id)).map((p) => <li><Link href={`/plugins/${encodeURIComponent(p.id)}`} class="row"><span class="name">{p.server?.title || p.server?.name || p.id}<small>{p.server?.url}</small></span><span class="meta"><span class="badge">{t('kind.remote')}</span>{p.problem ? <span class="badge warn">{t('plugins.problem')}</span> : null}</span></Link></li>)}
        </ul>
      )}
    </main>
  );
}

const modesOrder = ['read', 'write', 'money', 'public'];

export function PluginPage({ id }: { id: string }) {
  const [p, setP] = useState<any>(null);
  const [ui, setUI] = useState<any>(null);
  const [modes, setModes] = useState<Record<string, string>>({});
  const [audit, setAudit] = useState<any[]>([]);
  const [err, setErr] = useState('');
  const load = () => {
    const e = encodeURIComponent(id);
    get(`/v1/plugins/${e}`).then((pl) => {
      setP(pl);
      // A remote plugin's tools, with their titles and descriptions, are the server's as last listed.
      if (pl.kind === 'remote') get('/v1/remote-plugins').then((r) => { const rp = (r.plugins || []).find((x: any) => x.id === id); if (rp) setUI({ tools: (rp.server?.tools || []).map((tl: any) => ({ name: tl.name, title: tl.title, summary: tl.description, effect: tl.effect, untrusted: true })) }); }).catch(() => {});
      else get(`/v1/ui/plugins/${e}`).then(setUI).catch(() => {});
    }).catch((x) => setErr(errText(x)));
    get(`/v1/plugins/${e}/modes`).then((r) => setModes(r.modes || {})).catch(() => {});
    get(`/v1/audit?plugin=${e}&limit=10`).then((r) => setAudit(r.entries || [])).catch(() => {});
  };
  useEffect(load, [id]);
  const act = async (f: () => Promise<any>, done: Key) => { try { const m = await f(); say(typeof m === 'string' && m ? m : t(done)); load(); } catch (e) { say(errText(e)); } };
  if (err) return <main id="main"><div class="state error" role="alert">{err}</div></main>;
  if (!p) return <main id="main"><Skeleton rows={6} /></main>;
  const e = encodeURIComponent(id);
  const effectsUsed = modesOrder.filter((x) => (p.declarations?.tools || []).some((tl: any) => tl.effect === x));
  const en = locale.value === 'en';
  return (
    <main id="main" tabIndex={-1} class="plugin-page">
      <div class="page-head"><h1>{(en && (ui?.nameEn || p.nameEn)) || p.name}</h1></div>
      <p class="meta"><span class={`badge ${p.official ? 'official' : 'community'}`}>{t(p.official ? 'plugins.official' : 'plugins.community')}</span> <span class="badge">{t(kindKey(p.kind))}</span> {p.version} {p.note ? <span class="detail">{p.note}</span> : null}</p>
      {p.problem ? <p class="state error" role="alert">{p.problem}</p> : null}
      <div class="actions wrap">
        {p.kind === 'remote' ? <button type="button" onClick={() => act(async () => { const o = await post(`/v1/remote-plugins/${e}/refresh`, { lang: locale.value }); if (o.status === 'failed') throw new Error(o.error); return o.note || ''; }, 'plugins.updated')}>{t('plugins.update')}</button>
          : p.kind !== 'builtin' ? <button type="button" onClick={() => act(() => post(`/v1/plugins/${e}/update`, {}), 'plugins.updated')}>{t('plugins.update')}</button> : null}
        {p.held ? <button type="button" class="primary" onClick={() => act(() => post(`/v1/plugins/${e}/accept`, {}), 'plugins.accepted')}>{t('plugins.accept')}</button> : null}
        {p.previous ? <button type="button" onClick={() => act(() => post(`/v1/plugins/${e}/rollback`, {}), 'plugins.rolledBack')}>{t('plugins.rollback', { version: p.previous })}</button> : null}
        <button type="button" onClick={() => act(() => put(`/v1/plugins/${e}/enabled`, { enabled: !p.enabled }), 'action.done')}>{t(p.enabled ? 'plugins.disable' : 'plugins.enable')}</button>
        {p.kind !== 'builtin' ? <button type="button" class="destructive" onClick={() => { if (window.confirm(t('plugins.removeAsk', { name: p.name }))) act(async () => { await del(`/v1/plugins/${e}`); go('/plugins'); }, 'plugins.removed'); }}>{t('plugins.remove')}</button> : null}
      </div>
      {effectsUsed.length ? (
        <section aria-labelledby="modes-h"><h2 id="modes-h">{t('plugins.modes')}</h2>
          {effectsUsed.map((eff) => (
            <div class="g-field inline"><label for={`mode-${eff}`}>{effectName(eff)}</label>
              <select id={`mode-${eff}`} value={modes[eff] || (eff === 'read' ? 'auto' : 'ask')} onChange={(ev) => { const v = (ev.target as HTMLSelectElement).value; act(() => put(`/v1/plugins/${e}/modes`, { [eff]: v }), 'plugins.modeSaved'); }}>
                {['auto', 'ask', 'deny'].map((m) => <option value={m}>{t(('mode.' + m) as Key)}</option>)}
              </select>
            </div>
          ))}
        </section>
      ) : null}
      <PluginCloud id={id} />
      <section aria-labelledby="tools-h"><h2 id="tools-h">{t('plugins.tools')}</h2>
        <ul class="rows">{(ui?.tools || p.declarations?.tools || []).map((tl: any) => <li class="row"><span class="name">{toolTitle(tl)}<small>{tl.name}</small></span><span class="meta"><span class={`effect e-${tl.effect}`}>{effectName(tl.effect)}</span>{tl.userOnly ? <span class="badge">{t('plugins.userOnly')}</span> : null}{tl.untrusted ? <span class="badge warn">{t('chat.untrusted')}</span> : null}</span></li>)}</ul>
      </section>
      {ui?.widgets?.length ? <section aria-labelledby="w-h"><h2 id="w-h">{t('plugins.widgets')}</h2><ul class="rows">{ui.widgets.map((w: any) => <li class="row"><span class="name">{(en && w.titleEn) || w.title || w.name}</span><span class="meta">{w.sizes.map((s: string) => t(('size.' + s) as Key)).join(' · ')}<button type="button" onClick={() => act(() => callTool('dashboard__upsertWidget', { widget: `${id}.${w.name}`, size: w.sizes.includes('md') ? 'md' : w.sizes[0] }), 'dashboard.added')}>{t('dashboard.addThis')}</button></span></li>)}</ul></section> : null}
      {ui?.screens?.length ? <section aria-labelledby="s-h"><h2 id="s-h">{t('plugins.screens')}</h2><ul class="rows">{ui.screens.map((s: any) => <li><Link class="row" href={`/p/${e}/${encodeURIComponent(s.name)}`}>{(en && s.titleEn) || s.title || s.name}</Link></li>)}</ul></section> : null}
      {ui?.settings?.length ? <section aria-labelledby="set-h"><h2 id="set-h">{t('plugins.settingsRows')}</h2><ul class="rows">{ui.settings.map((s: any) => <li><Link class="row" href={`/p/${e}/${encodeURIComponent(s.screen)}`}><span class="name">{s.title}<small>{s.subtitle}</small></span></Link></li>)}</ul></section> : null}
      {ui?.dataSources?.length ? <section aria-labelledby="ds-h"><h2 id="ds-h">{t('plugins.dataSources')}</h2><ul class="rows">{ui.dataSources.map((d: any) => <li class="row"><span class="name">{d.title || d.name}<small>{d.tool}</small></span><span class="meta">{d.ttlSeconds ? t('plugins.ttl', { minutes: Math.round(d.ttlSeconds / 60) }) : ''}</span></li>)}</ul></section> : null}
      <section aria-labelledby="a-h"><h2 id="a-h">{t('plugins.audit')}</h2>
        {audit.length === 0 ? <p class="detail">{t('plugins.noAudit')}</p> : <ul class="rows">{audit.map((a: any) => { const tl = (ui?.tools || []).find((x: any) => x.name === a.tool); return <li class="row"><span class="name">{tl ? toolTitle(tl) : a.tool}<small>{word('audit.actor.', a.actor)} · <AuditTime at={a.at} /></small></span><span class="meta" title={a.error || undefined}>{word('audit.outcome.', a.outcome)}</span></li>; })}</ul>}
      </section>
    </main>
  );
}

export { Install } from './install';

function Choice<T extends string>({ name, label, value, options, onChange }: { name: string; label: string; value: T; options: [T, string][]; onChange: (v: T) => void }) {
  return (
    <fieldset class="segmented"><legend>{label}</legend>
      {options.map(([v, l]) => <label><input type="radio" name={name} value={v} checked={value === v} onChange={() => onChange(v)} /><span>{l}</span></label>)}
    </fieldset>
  );
}

export function Settings({ page }: { page?: string }) {
  const [campus, setCampus] = useState<any>(null);
  const [tok, setTok] = useState(token());
  useEffect(() => {
    get('/v1/campus').then(setCampus).catch(() => setCampus({ services: [] }));
  }, []);
  const services: any[] = Array.isArray(campus?.services) ? campus.services : campus ? Object.entries(campus.services || campus).filter(([, v]) => typeof v === 'object').map(([k, v]: any) => ({ service: k, ...v })) : [];
  return (
    <main id="main" tabIndex={-1} class="settings">
      <h1>{t('nav.settings')}</h1>
      <section aria-labelledby="look-h"><h2 id="look-h">{t('settings.look')}</h2>
        <Choice name="lang" label={t('settings.language')} value={langChoice.value} options={[['system', t('settings.followBrowser')], ['zh-Hans', '简体中文'], ['en', 'English']]} onChange={setLang} />
        <Choice name="theme" label={t('settings.theme')} value={themeChoice.value} options={[['system', t('settings.system')], ['light', t('settings.light')], ['dark', t('settings.dark')]]} onChange={setTheme} />
      </section>
      <section aria-labelledby="campus-h" id="campus"><h2 id="campus-h">{t('settings.campus')}</h2>
        {!campus ? <Skeleton /> : services.length === 0 ? <p class="detail">{t('settings.campusNone')}</p> : (
          <ul class="rows">{services.map((s) => <li class="row"><span class="name">{s.title || s.service}<small>{s.service}</small></span><span class={`badge ${s.signedIn || s.status === 'signed_in' ? 'official' : 'off'}`}>{s.signedIn || s.status === 'signed_in' ? t('settings.signedIn') : t('settings.signedOut')}</span></li>)}</ul>
        )}
        {page === 'campus' ? <SignIn /> : <Link href="/settings/campus" class="btn">{t('action.signin')}</Link>}
      </section>
      <section aria-labelledby="ai-h" id="ai"><h2 id="ai-h">{t('settings.ai')}</h2>
        <AIProvider />
      </section>
      <CloudSettings />
      <section aria-labelledby="tok-h"><h2 id="tok-h">{t('token.title')}</h2>
        <p class="detail" id="tok-hint">{t('token.hint')}</p>
        <form class="g-row gap-sm wrap" onSubmit={(e) => { e.preventDefault(); setToken(tok.trim()); say(t('token.saved')); }}>
          <label for="tok" class="sr-only">{t('token.label')}</label>
          <input id="tok" type="password" autocomplete="off" value={tok} onInput={(e) => setTok((e.target as HTMLInputElement).value)} />
          <button type="submit">{t('token.save')}</button>
        </form>
      </section>
    </main>
  );
}

function SignIn() {
  const [user, setUser] = useState('');
  const [pass, setPass] = useState('');
  const [qr, setQr] = useState<any>(null);
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const run = async (f: () => Promise<any>) => { setBusy(true); try { const r = await f(); say(r?.message || t('action.done')); return r; } catch (e) { say(errText(e)); } finally { setBusy(false); } };
  return (
    <div class="signin g-col gap-md">
      <form class="g-col gap-sm" onSubmit={(e) => { e.preventDefault(); run(() => post('/v1/campus/login', { username: user, password: pass, ...(code ? { code } : {}) })); }}>
        <h3>{t('signin.password')}</h3>
        <div class="g-field"><label for="su">{t('signin.user')}</label><input id="su" autocomplete="username" value={user} onInput={(e) => setUser((e.target as HTMLInputElement).value)} /></div>
        <div class="g-field"><label for="sp">{t('signin.pass')}</label><input id="sp" type="password" autocomplete="current-password" value={pass} onInput={(e) => setPass((e.target as HTMLInputElement).value)} /></div>
        <div class="g-field"><label for="sc">{t('signin.code')}</label><input id="sc" autocomplete="one-time-code" inputMode="numeric" value={code} onInput={(e) => setCode((e.target as HTMLInputElement).value)} /></div>
        <button type="submit" class="primary" disabled={busy || !user || !pass}>{t('action.signin')}</button>
      </form>
      <div class="g-col gap-sm">
        <h3>{t('signin.qr')}</h3>
        <button type="button" disabled={busy} onClick={async () => setQr(await run(() => post('/v1/campus/qr', {})))}>{t('signin.qrStart')}</button>
        {qr?.image || qr?.png ? <img src={qr.image || ('data:image/png;base64,' + qr.png)} alt={t('signin.qrAlt')} width={200} height={200} /> : null}
        {qr ? <button type="button" disabled={busy} onClick={() => run(() => post('/v1/campus/qr/poll', { id: qr.id, ...(qr.ticket ? { ticket: qr.ticket } : {}) }))}>{t('signin.qrPoll')}</button> : null}
      </div>
      <button type="button" class="destructive" onClick={() => run(() => post('/v1/campus/logout', {}))}>{t('signin.logout')}</button>
    </div>
  );
}
