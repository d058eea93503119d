// Install: from a link, from an image of a QR code holding one (decoded in the browser), or a
// remote plugin (an MCP server's URL and token). Every way ends on a review sheet; nothing is
// installed before the person confirms it, and the host installs exactly what was reviewed
// (the plugin's hash, or the remote server's description's hash).
import { useState } from 'preact/hooks';
import { post, APIError } from './api';
import { t, locale, Key } from './i18n';
import { say, errText, go, effectName } from './app';
import { decodeQRFile, linkFromQR, QRError } from './qr';

type Method = 'link' | 'qr' | 'remote';

// webLink reports whether s is an install link this page may have reviewed: an https or http
// URL with a host (the host takes http to this computer only). A folder of this computer, a
// file: URL, official:NAME and builtin:ID are the command line's (harness plugins review): a
// page of another site can send the person to /install?link=…, and the host refuses them from
// a page too (POST /v1/reviews).
export function webLink(s: string): boolean {
  try { const u = new URL(s.trim()); return (u.protocol === 'https:' || u.protocol === 'http:') && !!u.host; } catch { return false; }
}

export function Install() {
  const q = new URLSearchParams(location.search);
  // /install?link=URL (the chat's "Open the review sheet" on a plugins__install result, or a link
  // from anywhere) fills the field with an install link and waits for the Review button: a page
  // the person visited may have sent them here, so nothing is read on load.
  const given = q.get('link');
  const [method, setMethod] = useState<Method>(q.get('remote') !== null ? 'remote' : 'link');
  const [src, setSrc] = useState(given && webLink(given) ? given.trim() : '');
  const [rv, setRv] = useState<any>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState(given && !webLink(given) ? t('install.notLink', { link: given.length > 120 ? given.slice(0, 120) + '…' : given }) : '');
  const review = async (link = src) => {
    if (!webLink(link)) { setProblem(t('install.notLink', { link: link.length > 120 ? link.slice(0, 120) + '…' : link })); return; }
    setBusy(true); setProblem('');
    try { setRv(await post('/v1/reviews', { source: link.trim(), lang: locale.value === 'en' ? 'en' : 'zh-Hans' })); } catch (e) { say(errText(e)); } finally { setBusy(false); }
  };
  const pick = (m: Method) => { setMethod(m); setRv(null); };
  const methods: [Method, Key][] = [['link', 'install.byLink'], ['qr', 'install.byQR'], ['remote', 'install.byRemote']];
  return (
    <main id="main" tabIndex={-1} class="install">
      <h1>{t('install.title')}</h1>
      <fieldset class="segmented" aria-label={t('install.how')}>
        {methods.map(([m, k]) => <label><input type="radio" name="method" value={m} checked={method === m} onChange={() => pick(m)} /><span>{t(k)}</span></label>)}
      </fieldset>
      {problem ? <p class="state error link-problem" role="alert">{problem}</p> : null}
      {method === 'link' ? (
        <form class="g-col gap-sm" onSubmit={(e) => { e.preventDefault(); review(); }}>
          {given && webLink(given) && src === given.trim() && !rv ? <p class="detail from-address">{t('install.fromAddress')}</p> : null}
          <div class="g-field"><label for="link">{t('install.link')}</label><input id="link" type="url" inputMode="url" required value={src} placeholder="https://…" onInput={(e) => { setSrc((e.target as HTMLInputElement).value); setRv(null); setProblem(''); }} /></div>
          <button type="submit" class="primary" disabled={busy || !src.trim()}>{t('install.review')}</button>
        </form>
      ) : method === 'qr' ? (
        <QRPick busy={busy} onLink={(l) => { setSrc(l); review(l); }} />
      ) : <AddRemote initial={q.get('remote') || ''} />}
      {rv && method !== 'remote' ? <ReviewSheet rv={rv} src={src} busy={busy} setBusy={setBusy} onCancel={() => setRv(null)} /> : null}
    </main>
  );
}

// QRPick takes an image by file picker or drop, decodes its QR code and hands on the install
// link it holds; anything else gets a message that says what was wrong with the image.
function QRPick({ busy, onLink }: { busy: boolean; onLink: (link: string) => void }) {
  const [problem, setProblem] = useState('');
  const [found, setFound] = useState('');
  const [over, setOver] = useState(false);
  const [reading, setReading] = useState(false);
  const take = async (f: File | undefined | null) => {
    if (!f) return;
    setProblem(''); setFound(''); setReading(true);
    try {
      const text = await decodeQRFile(f);
      const link = linkFromQR(text);
      setFound(link);
      onLink(link);
    } catch (e) {
      setProblem(e instanceof QRError ? t(e.key, e.vars) : errText(e));
    } finally { setReading(false); }
  };
  return (
    <div class="g-col gap-sm">
      <label class={`drop${over ? ' over' : ''}`}
        onDragOver={(e) => { e.preventDefault(); setOver(true); }} onDragLeave={() => setOver(false)}
        onDrop={(e) => { e.preventDefault(); setOver(false); take(e.dataTransfer?.files?.[0]); }}>
        <span class="drop-title">{t('qr.pick')}</span>
        <span class="detail">{t('qr.hint')}</span>
        <input id="qr-file" class="file" type="file" accept="image/*" disabled={busy || reading} aria-describedby="qr-status"
          onChange={(e) => { const i = e.target as HTMLInputElement; take(i.files?.[0]); i.value = ''; }} />
      </label>
      <p id="qr-status" role="status" class="detail">{reading ? t('qr.reading') : found ? t('qr.found', { link: found }) : ''}</p>
      {problem ? <p class="state error qr-problem" role="alert">{problem}</p> : null}
    </div>
  );
}

// ReviewSheet is the same review sheet as the CLI's: Official/Community, campus services,
// websites, app features, cloud, every tool with summary and effect, and the hash installed.
export function ReviewSheet({ rv, src, busy, setBusy, onCancel }: { rv: any; src: string; busy: boolean; setBusy: (b: boolean) => void; onCancel: () => void }) {
  const en = locale.value === 'en';
  const install = async () => {
    setBusy(true);
    try { const p = await post('/v1/plugins', { source: rv.source || src.trim(), hash: rv.hash }); say(t('install.done', { name: p.name })); go(`/plugins/${encodeURIComponent(p.id)}`); } catch (e) { say(errText(e)); } finally { setBusy(false); }
  };
  return (
    <section class="sheet review" role="region" aria-labelledby="rv-h">
      <h2 id="rv-h">{(en && rv.nameEn) || rv.name} <small>{rv.version}</small></h2>
      <p><span class={`badge ${rv.official ? 'official' : 'community'}`}>{t(rv.official ? 'plugins.official' : 'plugins.community')}</span> {rv.author}</p>
      <p>{(en && rv.descriptionEn) || rv.description}</p>
      {!rv.official ? <p class="warn" role="note">{t('install.communityNote')}</p> : null}
      {!rv.official && rv.instructions ? <details class="notes"><summary>{t('install.notes')}</summary><pre class="notes-text">{rv.instructions}</pre></details> : null}
      <dl>
        <dt>{t('install.campus')}</dt><dd>{rv.campus?.length ? rv.campus.join(', ') : t('install.none')}</dd>
        <dt>{t('install.websites')}</dt><dd>{rv.network?.length ? rv.network.join(', ') : t('install.none')}</dd>
        <dt>{t('install.features')}</dt><dd>{rv.abilities?.length ? rv.abilities.join(', ') : t('install.none')}</dd>
        {rv.cloud?.length ? <><dt>{t('install.cloud')}</dt><dd>{(en ? rv.disclosureEn : rv.disclosure)?.join(' ') || rv.cloud.join(', ')}</dd></> : null}
      </dl>
      <h3>{t('plugins.tools')}</h3>
      <ul class="rows">{(rv.tools || []).map((tl: any) => <li class="row"><span class="name">{(en && tl.titleEn) || tl.title}<small>{(en && tl.summaryEn) || tl.summary}</small></span><span class={`effect e-${tl.effect}`}>{effectName(tl.effect)}</span></li>)}</ul>
      <p class="detail mono">{t('install.hash')}: {rv.hash}</p>
      {rv.installed ? <p class="detail">{t('install.replaces', { version: rv.installed })}</p> : null}
      <div class="actions"><button type="button" class="primary" disabled={busy} onClick={install}>{t('install.confirm')}</button><button type="button" onClick={onCancel}>{t('action.cancel')}</button></div>
    </section>
  );
}

// AddRemote adds a remote plugin: its URL and token, then its review sheet (the server's tools
// with their effects and starting modes, and the instructions the model will read), then add.
// The token goes to the host, which keeps it sealed; no page shows it again.
export function AddRemote({ initial }: { initial: string }) {
  const [url, setUrl] = useState(initial);
  const [tok, setTok] = useState('');
  const [sheet, setSheet] = useState<any>(null);
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  const run = async (f: () => Promise<void>) => {
    setBusy(true); setProblem('');
    try { await f(); } catch (e) {
      const code = e instanceof APIError ? e.code : '';
      setProblem(code === 'token_required' ? t('remote.tokenRequired') : code === 'token_refused' ? t('remote.tokenRefused') : errText(e));
    } finally { setBusy(false); }
  };
  const review = () => run(async () => { setSheet(await post('/v1/remote-plugins/review', { url: url.trim(), token: tok.trim() })); });
  const add = () => run(async () => {
    const p = await post('/v1/remote-plugins', { url: url.trim(), token: tok.trim(), hash: sheet.hash });
    setTok('');
    say(t('remote.added', { name: sheet.title || sheet.name, tools: p.tools }));
    go(`/plugins/${encodeURIComponent(p.id)}`);
  });
  const change = (f: (v: string) => void) => (e: Event) => { f((e.target as HTMLInputElement).value); setSheet(null); };
  return (
    <div class="g-col gap-sm">
      <form class="g-col gap-sm" onSubmit={(e) => { e.preventDefault(); review(); }}>
        <p class="detail">{t('remote.about')}</p>
        <div class="g-field"><label for="remote-url">{t('remote.url')}</label><input id="remote-url" type="url" inputMode="url" required value={url} placeholder="https://…/mcp" onInput={change(setUrl)} /></div>
        <div class="g-field"><label for="remote-token">{t('remote.token')}</label><input id="remote-token" type="password" autocomplete="off" value={tok} aria-describedby="remote-token-hint" onInput={change(setTok)} /><small id="remote-token-hint" class="detail">{t('remote.tokenHint')}</small></div>
        <button type="submit" class="primary" disabled={busy || !url.trim()}>{t('install.review')}</button>
      </form>
      {problem ? <p class="state error" role="alert">{problem}</p> : null}
      {sheet ? (
        <section class="sheet review remote" role="region" aria-labelledby="rr-h">
          <h2 id="rr-h">{sheet.title || sheet.name} <small>{sheet.version}</small></h2>
          <p><span class="badge community">{t('plugins.community')}</span> <span class="badge">{t('kind.remote')}</span> <span class="mono">{sheet.id}</span></p>
          <p class="warn" role="note">{t('remote.note')}</p>
          <dl>
            <dt>{t('remote.server')}</dt><dd class="mono">{sheet.url}</dd>
            <dt>{t('remote.token')}</dt><dd>{t(sheet.hasToken ? 'remote.tokenKept' : 'remote.noToken')}</dd>
          </dl>
          <h3>{t('plugins.tools')}</h3>
          {sheet.tools.length === 0 ? <p class="detail">{t('remote.noTools')}</p> : (
            <ul class="rows">{sheet.tools.map((tl: any) => <li class="row" data-tool={tl.name}><span class="name">{tl.title || tl.name}<small>{tl.description}</small></span><span class="meta"><span class={`effect e-${tl.effect}`}>{effectName(tl.effect)}</span><span class="badge">{t(tl.mode === 'auto' ? 'remote.runsFree' : 'remote.asksFirst')}</span></span></li>)}</ul>
          )}
          <details><summary>{t('remote.instructions')}</summary><pre class="instructions">{sheet.instructions}</pre></details>
          <p class="detail mono">{t('install.hash')}: {sheet.hash}</p>
          <div class="actions"><button type="button" class="primary" disabled={busy} onClick={add}>{t('remote.add')}</button><button type="button" onClick={() => setSheet(null)}>{t('action.cancel')}</button></div>
        </section>
      ) : null}
    </div>
  );
}
