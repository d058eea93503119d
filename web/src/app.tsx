// The app shell: a client-side router over the History API, the tab bar
// (phone) or side bar (desktop), and the pages.
import { render } from 'preact';
import { signal, effect } from '@preact/signals';
import { useEffect, useState, useRef, useMemo } from 'preact/hooks';
import { LiveStream, LiveText } from './live';
import { api, get, post, put, del, callTool, stream, APIError, SSEEvent, setToken } from './api';
import { t, locale, langChoice, themeChoice, setLang, setTheme, applyDoc, Key } from './i18n';
import { GenUI, GNode, Action, Skeleton, Icon } from './genui';
import { renderMarkdown } from './markdown';
import { toolSchema, checkInput } from './schema';
import { ConsentDialog, consentAsk, requestConsent } from './cloud';

export const route = signal(location.pathname);
export function go(path: string) { if (path !== location.pathname + location.search) history.pushState(null, '', path); route.value = path.replace(/[?#].*$/, ''); window.scrollTo(0, 0); }
window.addEventListener('popstate', () => { route.value = location.pathname; });

const toast = signal('');
function say(msg: string) { toast.value = msg; setTimeout(() => { if (toast.value === msg) toast.value = ''; }, 4000); }
// signinOf is the campus service a failed call needs a session for (the API's not_signed_in),
// (its title, as Settings lists it), or null for any other failure: the app points to Settings → Campus sign-in, not to the CLI
// command the host's message names.
function signinOf(e: unknown): string | null { return e instanceof APIError && e.code === 'not_signed_in' ? String(e.body?.title || e.body?.service || '') : null; }
function errText(e: unknown) { const s = signinOf(e); if (s !== null) return t('error.signin', { service: s }); return e instanceof Error ? e.message : String(e); }

function Link({ href, children, ...rest }: any) {
  return <a href={href} {...rest} onClick={(e: MouseEvent) => { if (e.ctrlKey || e.metaKey || e.button) return; e.preventDefault(); go(href); }}>{children}</a>;
}

// --- running a tool as the user, with the host's confirmation when asked ---
const effects: Record<string, Key> = { read: 'effect.read', write: 'effect.write', money: 'effect.money', public: 'effect.public', device: 'effect.device' };
export function effectName(e: string) { return effects[e] ? t(effects[e]) : e; }
// toolTitle is a tool's title in the page's language: the host sends the English one (titleEn)
// next to the Chinese; without it, the Chinese title, then the tool's name.
export function toolTitle(x: Record<string, any>): string { return (locale.value === 'en' && x.titleEn) || x.title || x.tool || x.name || ''; }
export function argsText(input: any): string {
  if (!input || typeof input !== 'object') return '';
  return Object.entries(input).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join('; ');
}
// whyText is why the host asked (a confirmation's why code) in the page's language, '' for
// a code this page does not know.
export function whyText(why: string, effect: string): string {
  switch (why) {
    case 'ask': return t('confirm.why.ask', { effect: effectName(effect) });
    case 'untrusted': return t('confirm.why.untrusted');
    case 'third_party': return t('confirm.why.third_party');
  }
  return '';
}
const runAsUser = (tool: string, args: any) => runTool(tool, args, 'user');
async function runTool(tool: string, args: any, actor: 'user' | 'agent', asked = false, drawn?: string): Promise<any> {
  let r;
  try { r = await callTool(tool, args, actor, drawn); } catch (e) {
    // requestConsent(): the host's consent panel, then the same call once allowed.
    const ask = asked ? null : consentAsk(e);
    if (!ask) throw e;
    if (!(await requestConsent(ask))) throw new Error(t('cloud.askDeclined', { name: ask.plugin }));
    return runTool(tool, args, actor, true, drawn);
  }
  if (r.status === 'confirm' && r.confirmation) {
    const c = r.confirmation;
    const why = whyText(c.why, c.effect);
    const ok = window.confirm(t('confirm.ask', { title: toolTitle(c) || tool, effect: effectName(c.effect), args: argsText(c.input ?? args), why: why ? why + '\n\n' : '' }));
    const a = await post(`/v1/confirmations/${encodeURIComponent(c.id)}`, { approve: ok });
    if (!ok) throw new Error(t('confirm.denied'));
    r = a;
  }
  return r;
}

// --- a drawn document: widget, screen or inline ---
interface DrawReq { plugin?: string; widget?: string; screen?: string; document?: any; tool?: string; args?: any; size?: string }
interface DrawRep { state: string; title?: string; sizes?: string[]; error?: string; detail?: string; updated?: string; stale?: boolean; service?: string; drawn?: { title: string; refresh?: number; root: GNode; problems?: string[] } }

// Drawn draws one document. It draws again when tick changes: the dashboard's cards are told
// to by the host (POST /v1/ui/dashboard/events), which owns their refresh. A plugin screen
// (screen) is one page the person has open: it draws again at its document's refresh interval
// while visible, through the host's cache (the data sources' TTLs decide whether a tool runs).
// drawn is the host's handle of a document the assistant drew (ui__render's result.drawn, "-"
// when the stored conversation has none): its buttons send it, and the host decides them under
// the turn that drew the document.
export function Drawn({ req, onTitle, onSizes, heading, tick, screen, drawn }: { req: DrawReq; onTitle?: (s: string) => void; onSizes?: (s: string[]) => void; heading?: boolean; tick?: number; screen?: boolean; drawn?: string }) {
  const [rep, setRep] = useState<DrawRep | null>(null);
  const [err, setErr] = useState('');
  const [form, setForm] = useState<Record<string, any>>({});
  const [problems, setProblems] = useState<string[]>([]);
  const [signin, setSignin] = useState<string | null>(null);
  const seq = useRef(0);
  const load = async (refresh = false, f = form) => {
    const n = ++seq.current;
    try {
      const body: any = { ...req, locale: locale.value, form: f, refresh };
      const r = await post<DrawRep>('/v1/ui/draw', body);
      if (n !== seq.current) return;
      arrived.current = performance.now();
      setRep(r); setErr('');
      const title = r.title || r.drawn?.title;
      if (title && onTitle) onTitle(title);
      if (r.sizes && onSizes) onSizes(r.sizes);
    } catch (e) { if (n === seq.current) setErr(errText(e)); }
  };
  const key = JSON.stringify(req) + locale.value;
  const arrived = useRef(0);
  useEffect(() => { setRep(null); load(); }, [key]);
  useEffect(() => { if (tick) load(); }, [tick]);
  useEffect(() => {
    const s = rep?.drawn?.refresh;
    if (!screen || !s) return;
    const id = setInterval(() => { if (document.visibilityState === 'visible') load(); }, Math.max(60, s) * 1000);
    return () => clearInterval(id);
  }, [screen, rep?.drawn?.refresh, key]);
  // Speed (docs/PERFORMANCE.md): from the draw reply's arrival to the committed DOM.
  useEffect(() => { if (arrived.current) { performance.measure('harness:widget', { start: arrived.current, end: performance.now() }); arrived.current = 0; } }, [rep]);
  const timer = useRef<any>(0);
  const ctx = {
    form,
    onField: (name: string, v: any) => { const f = { ...form, [name]: v }; setForm(f); clearTimeout(timer.current); timer.current = setTimeout(() => load(false, f), 200); },
    onAction: async (a: Action) => {
      clearTimeout(timer.current);
      try {
        // A plugin's widget or screen runs its own tools as the person; a document the assistant
        // drew in the chat (no plugin) is the assistant's: its button text is the assistant's
        // words, so the host decides as for the assistant's own call.
        // A plugin's document names its own tools only.
        const own = !!req.plugin;
        const m = /^([A-Za-z0-9-]+)(?:__|\.)(.+)$/.exec(a.tool);
        if (own && m && m[1] !== req.plugin) throw new Error(t('action.notOwn', { tool: a.tool }));
        const tool = own && !m ? `${req.plugin}__${a.tool}` : a.tool;
        const problems = checkInput(await toolSchema(tool), a.args || {});
        if (problems.length) { setProblems(problems); return; }
        setProblems([]); setSignin(null);
        await runTool(tool, a.args, own ? 'user' : 'agent', false, own ? undefined : (drawn || '-'));
        say(t('action.done'));
        if (a.then !== 'none') load(true);
      } catch (e) { const s = signinOf(e); setSignin(s); if (s === null) say(errText(e)); }
    },
  };
  if (err) return <div class="state error" role="alert"><p>{t('state.error')}</p><p class="detail">{err}</p><button type="button" onClick={() => load(true)}>{t('action.retry')}</button></div>;
  if (!rep) return <Skeleton />;
  if (rep.state === 'signin') return <div class="state signin"><Icon name="lock" /><p>{t('state.signin', { service: rep.service || '' })}</p><Link href="/settings/campus" class="btn">{t('action.signin')}</Link></div>;
  if (rep.state === 'verify') return <div class="state verify"><Icon name="key" /><p>{t('state.verify')}</p><Link href="/chat" class="btn">{t('action.openChat')}</Link></div>;
  if (rep.state === 'error') return (
    <div class="state error" role="alert"><p>{t('state.error')}</p><p class="detail">{rep.error}</p>
      {rep.detail && rep.detail !== rep.error ? <details><summary>{t('state.details')}</summary><code>{rep.detail}</code></details> : null}
      <button type="button" onClick={() => load(true)}>{t('action.retry')}</button></div>);
  return (
    <div class="drawn">
      {heading && rep.drawn ? <h1>{rep.drawn.title}</h1> : null}
      <GenUI node={rep.drawn!.root} ctx={ctx} />
      {problems.length ? <ul class="problems" role="alert">{problems.map((p) => <li>{p}</li>)}</ul> : null}
      {signin !== null ? <div class="state signin" role="alert"><Icon name="lock" /><p>{t('error.signin', { service: signin })}</p><Link href="/settings/campus" class="btn">{t('action.signin')}</Link></div> : null}
      {rep.updated ? <p class={`updated${rep.stale ? ' stale' : ''}`}>{t(rep.stale ? 'widget.stale' : 'widget.updated', { time: rep.updated })}</p> : null}
    </div>
  );
}

// --- dashboard ---
interface Card { id: string; widget?: string; document?: any; tool?: string; args?: any; size: string; config?: any }
const board = signal<Card[] | null>(null);
const boardErr = signal('');
// ticks counts the host's refresh events per card; a card draws again when its count moves.
const ticks = signal<Record<string, number>>({});
async function loadBoard() {
  try { const r = await callTool('dashboard__list', {}); board.value = r.result?.widgets || []; boardErr.value = ''; } catch (e) { boardErr.value = errText(e); }
}

// useHostRefresh keeps one event stream open for the cards shown while the page is visible
// (reopened when the cards change, and after a dropped connection); the host refreshes their
// data at their intervals and names the card to draw again. A hidden page closes the stream, so
// the host stops refreshing for it; when it is visible again each card draws once through the
// host's cache and the stream reopens.
function useHostRefresh(cards: Card[] | null) {
  const ids = (cards || []).map((c) => c.id).join(',');
  useEffect(() => {
    if (!ids) return;
    let ctl: AbortController | null = null, retry: any = 0, wait = 2000;
    const bump = (id: string) => { ticks.value = { ...ticks.value, [id]: (ticks.value[id] || 0) + 1 }; };
    const open = async () => {
      const mine = (ctl = new AbortController());
      try {
        await stream('/v1/ui/dashboard/events', { cards: ids.split(',') }, (e) => {
          wait = 2000;
          if (e.type === 'refresh' && e.card) bump(e.card);
        }, mine.signal);
      } catch (e) { if ((e as any)?.name === 'AbortError') return; }
      if (ctl === mine && !mine.signal.aborted) { retry = setTimeout(open, wait); wait = Math.min(wait * 2, 60000); }
    };
    const close = () => { clearTimeout(retry); ctl?.abort(); ctl = null; };
    const onVisibility = () => {
      if (document.visibilityState === 'hidden') { close(); return; }
      if (ctl) return;
      for (const id of ids.split(',')) bump(id);
      open();
    };
    if (document.visibilityState !== 'hidden') open();
    document.addEventListener('visibilitychange', onVisibility);
    return () => { document.removeEventListener('visibilitychange', onVisibility); close(); };
  }, [ids]);
}

function CardView({ card }: { card: Card }) {
  const [title, setTitle] = useState('');
  const [menu, setMenu] = useState(false);
  const [sizes, setSizes] = useState<string[]>([card.size]); // the widget's declared sizes, from the draw reply
  const req: DrawReq = card.widget
    ? { plugin: card.widget.split('.')[0], widget: card.widget.split('.').slice(1).join('.'), size: card.size }
    : { document: typeof card.document === 'string' ? JSON.parse(card.document) : card.document, tool: card.tool, args: card.args, size: card.size };
  const upsert = async (size: string) => {
    setMenu(false);
    try { await runAsUser('dashboard__upsertWidget', card.widget ? { id: card.id, widget: card.widget, size, config: card.config } : { id: card.id, document: JSON.stringify(card.document), tool: card.tool, args: card.args, size }); loadBoard(); } catch (e) { say(errText(e)); }
  };
  const remove = async () => { setMenu(false); try { await runAsUser('dashboard__removeWidget', { id: card.id }); loadBoard(); } catch (e) { say(errText(e)); } };
  const name = title || t('widget.untitled');
  return (
    <section class={`card size-${card.size}`} aria-label={name} data-card={card.id}>
      <header>
        <h2>{title}</h2>
        <div class="menu">
          <button type="button" class="icon" aria-haspopup="menu" aria-expanded={menu} aria-label={t('widget.menu', { name })} onClick={() => setMenu(!menu)}>⋯</button>
          {menu ? (
            <div role="menu" class="popup" onKeyDown={(e) => { if (e.key === 'Escape') setMenu(false); }}>
              {sizes.map((s) => <button type="button" role="menuitemradio" aria-checked={card.size === s} onClick={() => upsert(s)}>{t(('size.' + s) as Key)}</button>)}
              <button type="button" role="menuitem" class="destructive" onClick={remove}>{t('widget.remove')}</button>
            </div>
          ) : null}
        </div>
      </header>
      <Drawn req={req} onTitle={setTitle} onSizes={setSizes} tick={ticks.value[card.id] || 0} />
    </section>
  );
}

function AddWidget({ onClose }: { onClose: () => void }) {
  const [plugins, setPlugins] = useState<any[] | null>(null);
  useEffect(() => {
    get('/v1/plugins').then(async (r) => {
      const list = r.plugins || [];
      // A plugin's widgets are in its app description (GET /v1/ui/plugins/{id}), not its record.
      const full = await Promise.all(list.filter((p: any) => p.enabled !== false).map((p: any) => get(`/v1/ui/plugins/${encodeURIComponent(p.id)}`).then((ui) => ({ ...ui, name: p.name })).catch(() => null)));
      setPlugins(full.filter((p) => p && p.widgets?.length));
    }).catch((e) => say(errText(e)));
  }, []);
  // No size: the host gives the widget its default (md when declared, else its first size).
  const add = async (w: string) => { try { await runAsUser('dashboard__upsertWidget', { widget: w }); onClose(); loadBoard(); } catch (e) { say(errText(e)); } };
  return (
    <div class="sheet" role="dialog" aria-modal="true" aria-labelledby="add-title">
      <h2 id="add-title">{t('dashboard.add')}</h2>
      {!plugins ? <Skeleton /> : plugins.length === 0 ? <p>{t('dashboard.noWidgets')}</p> : (
        <ul class="plain">
          {plugins.flatMap((p) => p.widgets.map((w: any) => <li><button type="button" onClick={() => add(`${p.id}.${w.name}`)}>{(locale.value === 'en' && p.nameEn) || p.name} · {(locale.value === 'en' && w.titleEn) || w.title || w.name}</button></li>))}
        </ul>
      )}
      <button type="button" onClick={onClose}>{t('action.close')}</button>
    </div>
  );
}

function Dashboard() {
  const [adding, setAdding] = useState(false);
  useEffect(() => { loadBoard(); }, []);
  useHostRefresh(board.value);
  return (
    <main id="main" tabIndex={-1}>
      <div class="page-head"><h1>{t('nav.dashboard')}</h1><button type="button" onClick={() => setAdding(true)}>{t('dashboard.add')}</button></div>
      {boardErr.value ? <div class="state error" role="alert"><p>{boardErr.value}</p><button type="button" onClick={loadBoard}>{t('action.retry')}</button></div>
        : board.value === null ? <Skeleton rows={4} />
        : board.value.length === 0 ? <div class="state empty"><p>{t('dashboard.empty')}</p></div>
        : <div class="grid">{board.value.map((c) => <CardView key={c.id + c.size} card={c} />)}</div>}
      {adding ? <AddWidget onClose={() => setAdding(false)} /> : null}
    </main>
  );
}

// --- chat ---
interface Item { kind: 'user' | 'text' | 'tool' | 'confirm' | 'question' | 'error' | 'ui'; [k: string]: any }

// storedItems is a stored conversation (GET /v1/conversations/{id}: messages, confirmations)
// as the live chat showed it: each call's row with its outcome — a failed or refused call marked
// as not run, with the words the live row had; an untrusted result badged — and after it the
// confirmation asked for it, answered as it was. A tool message answers the newest unfinished
// row of its call id, and a confirmation belongs to the next row of its call id and tool (a
// provider may reuse call ids across rounds).
export function storedItems(c: any): Item[] {
  const out: Item[] = [];
  const asked: Record<string, any[]> = {};
  for (const x of c?.confirmations || []) (asked[x.callId + '\n' + x.tool] ||= []).push(x);
  for (const m of c?.messages || []) {
    if (m.role === 'user') out.push({ kind: 'user', text: m.content });
    else if (m.role === 'assistant') {
      if (m.content) out.push({ kind: 'text', text: m.content });
      for (const call of m.toolCalls || []) {
        out.push({ kind: 'tool', id: call.id, tool: call.name });
        const cf = asked[call.id + '\n' + call.name]?.shift();
        if (cf) out.push({ kind: 'confirm', id: cf.id, callId: cf.callId, tool: cf.tool, input: cf.input, why: cf.why, answered: cf.outcome || 'denied' });
      }
    } else if (m.role === 'tool') {
      let i = out.length - 1;
      while (i >= 0 && !(out[i].kind === 'tool' && out[i].id === m.toolCallId && !out[i].done)) i--;
      if (i < 0) continue;
      let body: any;
      try { body = JSON.parse(m.content); } catch { body = undefined; }
      if (m.failed) {
        const error = body && typeof body.error === 'string' && body.error ? body.error : String(m.content || t('state.error'));
        out[i] = { ...out[i], done: true, error };
      } else {
        // An untrusted result is kept wrapped for the model: it is not the tool's value.
        out[i] = { ...out[i], done: true, untrusted: !!m.untrusted, result: m.untrusted ? undefined : body };
      }
    }
  }
  return out;
}

function Chat({ id }: { id?: string }) {
  const [convs, setConvs] = useState<any[]>([]);
  const [items, setItems] = useState<Item[]>([]);
  const [input, setInput] = useState('');
  const [busy, setBusy] = useState(false);
  const [cmds, setCmds] = useState<any[]>([]);
  const [pick, setPick] = useState(0);
  const abort = useRef<AbortController | null>(null);
  const conv = useRef<string | undefined>(id);
  const listRef = useRef<HTMLDivElement>(null);
  const live = useMemo(() => new LiveStream(), []);
  const refreshList = () => get('/v1/conversations').then((r) => setConvs(r.conversations || [])).catch(() => {});
  useEffect(() => { refreshList(); get('/v1/commands').then((r) => setCmds(r.commands || [])).catch(() => setCmds([])); }, []);
  useEffect(() => {
    conv.current = id;
    live.take();
    setItems([]);
    if (!id) return;
    get(`/v1/conversations/${encodeURIComponent(id)}`).then((r) => {
      if (conv.current !== id) return;
      const out = storedItems(r.conversation);
      setItems(out);
      // A stored conversation keeps the model's tool names only: the rows get their titles (both
      // languages) from each plugin's tool list, one request per plugin.
      const plugins = [...new Set(out.filter((x) => x.kind === 'tool' || x.kind === 'confirm').map((x) => String(x.tool).split('__')[0]))];
      for (const pl of plugins) get(`/v1/ui/plugins/${encodeURIComponent(pl)}`).then((ui) => {
        if (conv.current !== id) return;
        const by: Record<string, any> = {};
        for (const tl of ui.tools || []) by[pl + '__' + tl.name] = tl;
        update((l) => l.map((x) => ((x.kind === 'tool' || x.kind === 'confirm') && !x.title && by[x.tool] ? { ...x, title: by[x.tool].title, titleEn: by[x.tool].titleEn, effect: x.effect || by[x.tool].effect } : x)));
      }).catch(() => {});
    }).catch((e) => say(errText(e)));
  }, [id]);
  // The live element is always last (and hidden between messages): keep the newest item in view.
  useEffect(() => { const el = listRef.current; if (el) el.scrollTop = el.scrollHeight; }, [items.length]);
  const update = (f: (list: Item[]) => Item[]) => setItems((l) => f(l.slice()));
  // A text token goes straight to the live element (live.tsx), not through a re-render of the
  // thread; any other event ends the live message, which joins the thread as Markdown.
  const freeze = () => { const s = live.take(); return (l: Item[]) => { if (s) l.push({ kind: 'text', text: s }); }; };
  const onEvent = (e: SSEEvent, at: number) => {
    if (e.type === 'text') {
      performance.mark('harness:sse-text', { startTime: at });
      live.push(e.text || '', at);
      return;
    }
    if (e.type === 'reasoning') return;
    const flush = freeze();
    update((l) => {
      flush(l);
      switch (e.type) {
        case 'tool_call': l.push({ kind: 'tool', id: e.callId, tool: e.tool, title: e.title, titleEn: e.titleEn, effect: e.effect, input: e.input }); break;
        case 'tool_result': {
          // The newest unfinished row of that call id: a provider may reuse ids across rounds.
          let i = l.length - 1;
          while (i >= 0 && !(l[i].kind === 'tool' && l[i].id === e.callId && !l[i].done)) i--;
          if (i >= 0) l[i] = { ...l[i], done: true, error: e.error, untrusted: e.untrusted, result: e.result };
          if (e.tool === 'ui__render' && e.result?.document) l.push({ kind: 'ui', document: e.result.document, drawn: e.result.drawn });
          break;
        }
        case 'confirmation': l.push({ ...e, kind: 'confirm' }); break;
        case 'question': l.push({ ...e, kind: 'question', qkind: e.kind }); break;
        case 'error': l.push({ kind: 'error', text: e.message || e.kind }); break;
      }
      return l;
    });
  };
  const send = async (text: string) => {
    if (!text.trim() || busy) return;
    setInput(''); setBusy(true);
    update((l) => [...l, { kind: 'user', text }]);
    try {
      if (!conv.current) {
        const c = await post('/v1/conversations', { title: text.slice(0, 40) });
        conv.current = c.id;
        history.replaceState(null, '', `/chat/${c.id}`);
        refreshList();
      }
      abort.current = new AbortController();
      await stream(`/v1/conversations/${encodeURIComponent(conv.current!)}/messages`, { text }, onEvent, abort.current.signal);
    } catch (e) {
      const flush = freeze();
      update((l) => { flush(l); if ((e as any)?.name !== 'AbortError') l.push({ kind: 'error', text: errText(e) }); return l; });
    } finally { const flush = freeze(); update((l) => { flush(l); return l; }); setBusy(false); abort.current = null; refreshList(); }
  };
  const stop = async () => { if (conv.current) await post(`/v1/conversations/${encodeURIComponent(conv.current)}/cancel`, {}).catch(() => {}); abort.current?.abort(); };
  const answer = async (it: Item, approve: boolean) => {
    try {
      await post(`/v1/conversations/${encodeURIComponent(conv.current!)}/confirmations/${encodeURIComponent(it.id)}`, { approve });
      update((l) => l.map((x) => (x === it ? { ...x, answered: approve ? 'approved' : 'denied' } : x)));
    } catch (e) { say(errText(e)); }
  };
  const respond = async (it: Item, values: Record<string, any> | null) => {
    try {
      await post(`/v1/conversations/${encodeURIComponent(conv.current!)}/questions/${encodeURIComponent(it.id)}`, values ? { answer: values } : { decline: true });
      update((l) => l.map((x) => (x === it ? { ...x, answered: values ? 'answered' : 'declined' } : x)));
    } catch (e) { say(errText(e)); }
  };
  const slash = input.startsWith('/') && !input.includes(' ');
  const matches = slash ? cmds.filter((c) => ('/' + c.name).startsWith(input) || (c.aliases || []).some((a: string) => ('/' + a).startsWith(input))).slice(0, 8) : [];
  const picked = Math.min(pick, matches.length - 1);
  // The command menu from the keyboard: up/down move, Enter or Tab takes the highlighted command.
  const menuKey = (e: KeyboardEvent) => {
    if (!matches.length || e.isComposing) return false;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') { e.preventDefault(); setPick((picked + (e.key === 'ArrowDown' ? 1 : matches.length - 1)) % matches.length); return true; }
    if ((e.key === 'Enter' && !e.shiftKey) || e.key === 'Tab') { e.preventDefault(); setInput('/' + matches[picked].name + ' '); return true; }
    return false;
  };
  return (
    <main id="main" tabIndex={-1} class="chat">
      <aside class="convs" aria-label={t('chat.conversations')}>
        <button type="button" onClick={() => { conv.current = undefined; go('/chat'); setItems([]); }}>{t('chat.new')}</button>
        <ul class="plain">{convs.map((c) => <li><Link href={`/chat/${c.id}`} aria-current={c.id === conv.current ? 'page' : undefined}>{c.title || c.id}</Link></li>)}</ul>
      </aside>
      <section class="thread">
        <div class="messages" ref={listRef} aria-live="polite">
          {items.length === 0 ? <p class="hint">{t('chat.hint')}</p> : null}
          {items.map((it, i) => {
            switch (it.kind) {
              case 'user': return <div key={i} class="msg user"><p>{it.text}</p></div>;
              case 'text': return <div key={i} class="msg bot" dangerouslySetInnerHTML={{ __html: renderMarkdown(it.text) }} />;
              case 'tool': return <div key={i} class={`tool ${it.error ? 'failed' : ''}`} data-tool={it.tool}><Icon name={it.done ? (it.error ? 'warning' : 'check') : 'clock'} /> <span>{toolTitle(it)}</span> <span class={`effect e-${it.effect}`}>{it.effect ? effectName(it.effect) : ''}</span>{it.untrusted ? <span class="untrusted">{t('chat.untrusted')}</span> : null}{it.error ? <span class="detail"> — {it.error}</span> : null}{it.done && !it.error ? <ReviewAction tool={it.tool} result={it.result} /> : null}</div>;
              case 'ui': return <div key={i} class="inline-ui"><Drawn req={{ document: it.document }} drawn={it.drawn || '-'} /></div>;
              case 'confirm': return (
                <div key={i} class="confirm-card" role="group" aria-label={t('confirm.title')}>
                  <p class="title">{t('confirm.title')}: <strong>{toolTitle(it)}</strong> <span class={`effect e-${it.effect}`}>{effectName(it.effect)}</span></p>
                  {argsText(it.input) ? <p class="args">{argsText(it.input)}</p> : null}
                  {whyText(it.why, it.effect) ? <p class="detail">{whyText(it.why, it.effect)}</p> : null}
                  {it.answered ? <p class="answered">{t(answeredKey[it.answered] || 'confirm.denied')}</p> : (
                    <div class="actions"><button type="button" class="primary" onClick={() => answer(it, true)}>{t('confirm.approve')}</button><button type="button" onClick={() => answer(it, false)}>{t('confirm.deny')}</button></div>
                  )}
                </div>);
              case 'question': return <Question key={i} it={it} onAnswer={(v) => respond(it, v)} />;
              case 'error': return <div key={i} class="msg error" role="alert">{it.text}</div>;
            }
            return null;
          })}
          <LiveText stream={live} />
        </div>
        <form class="composer" onSubmit={(e) => { e.preventDefault(); send(input); }}>
          {matches.length ? (
            <ul class="slash" role="listbox" aria-label={t('chat.commands')}>
              {matches.map((c, j) => <li role="option" aria-selected={j === picked}><button type="button" tabIndex={-1} onClick={() => setInput('/' + c.name + ' ')}><code>/{c.name}</code> {(c.aliases || []).map((a: string) => <code class="alias">/{a}</code>)} <span class="hint">{c.description || ''}{c.argHint ? <span class="arg"> · {c.argHint}</span> : null}</span></button></li>)}
            </ul>
          ) : null}
          <label for="composer-input" class="sr-only">{t('chat.message')}</label>
          <textarea id="composer-input" rows={1} value={input} placeholder={t('chat.placeholder')} onInput={(e) => { setInput((e.target as HTMLTextAreaElement).value); setPick(0); }}
            onKeyDown={(e) => { if (menuKey(e)) return; if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(input); } }} />
          {busy ? <button type="button" class="destructive" onClick={stop}>{t('chat.stop')}</button> : <button type="submit" class="primary" disabled={!input.trim()}>{t('chat.send')}</button>}
        </form>
      </section>
    </main>
  );
}

// ReviewAction turns a plugins__install or plugins__installRemote result into the way to its
// review sheet: a link's review opens /install?link=…, a remote server's /install?remote=…, a
// draft's (source draft:<hash>, which only this host holds) opens inline from the result. It
// only opens the sheet: installing is the person's button on it, never the assistant's.
export function ReviewAction({ tool, result }: { tool: string; result: any }) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!result || typeof result !== 'object' || result.opened !== true) return null;
  const web = (u: unknown) => typeof u === 'string' && /^https?:\/\//i.test(u);
  if (tool === 'plugins__installRemote') return web(result.url) ? <Link class="btn review-action" href={'/install?remote=' + encodeURIComponent(result.url)}>{t('chat.openReview')}</Link> : null;
  if (tool !== 'plugins__install') return null;
  const rv = result.review;
  const src = typeof result.source === 'string' ? result.source : '';
  if (web(src)) return <Link class="btn review-action" href={'/install?link=' + encodeURIComponent(src)}>{t('chat.openReview')}</Link>;
  if (!src.startsWith('draft:') || !rv || typeof rv.hash !== 'string') return null;
  return open ? <div class="inline-review"><ReviewSheet rv={rv} src={src} busy={busy} setBusy={setBusy} onCancel={() => setOpen(false)} /></div>
    : <button type="button" class="review-action" onClick={() => setOpen(true)}>{t('chat.openReview')}</button>;
}

// answeredKey words a confirmation's outcome (live: approved or denied; stored: also expired or
// cancelled).
const answeredKey: Record<string, Key> = { approved: 'confirm.approved', denied: 'confirm.denied', expired: 'confirm.expired', cancelled: 'confirm.cancelled' };

function Question({ it, onAnswer }: { it: Item; onAnswer: (v: Record<string, any> | null) => void }) {
  const fields: any[] = Array.isArray(it.fields) && it.fields.length ? it.fields : [{ name: 'code', label: it.qkind === 'verification_required' ? t('question.code') : t('question.answer') }];
  const [vals, setVals] = useState<Record<string, string>>({});
  if (it.answered) return <div class="question"><p>{it.message}</p><p class="answered">{t(it.answered === 'answered' ? 'question.answered' : 'question.declined')}</p></div>;
  return (
    <form class="question" onSubmit={(e) => { e.preventDefault(); onAnswer(vals); }}>
      <p>{it.message || t('question.title')}</p>
      {fields.map((f, i) => { const name = f.name || f.key || 'field' + i; return <div class="g-field"><label for={`q-${it.id}-${name}`}>{f.label || f.title || name}</label><input id={`q-${it.id}-${name}`} autocomplete="one-time-code" value={vals[name] || ''} onInput={(e) => setVals({ ...vals, [name]: (e.target as HTMLInputElement).value })} /></div>; })}
      <div class="actions"><button type="submit" class="primary">{t('question.send')}</button><button type="button" onClick={() => onAnswer(null)}>{t('question.decline')}</button></div>
    </form>
  );
}

import { Plugins, PluginPage, Install, Settings } from './plugins';
import { ReviewSheet } from './install';

function Nav() {
  const r = route.value;
  const tabs: [string, Key, string][] = [['/', 'nav.dashboard', 'chart'], ['/chat', 'nav.chat', 'sparkles'], ['/plugins', 'nav.plugins', 'star'], ['/settings', 'nav.settings', 'key']];
  return (
    <nav class="tabs" aria-label={t('nav.label')}>
      <span class="brand">{t('app.name')}</span>
      {tabs.map(([href, key, icon]) => { const cur = href === '/' ? r === '/' : r.startsWith(href); return <Link href={href} aria-current={cur ? 'page' : undefined}><Icon name={icon} /><span>{t(key)}</span></Link>; })}
    </nav>
  );
}

function Screen({ plugin, screen, modal }: { plugin: string; screen: string; modal?: boolean }) {
  return <main id="main" tabIndex={-1} class={modal ? 'modal-screen' : ''}>{modal ? <button type="button" onClick={() => history.back()}>{t('action.close')}</button> : null}<Drawn req={{ plugin, screen, size: 'lg' }} heading screen /></main>;
}

function Page() {
  const r = route.value;
  let m: RegExpMatchArray | null;
  if (r === '/' || r === '') return <Dashboard />;
  if ((m = r.match(/^\/chat(?:\/([^/]+))?$/))) return <Chat id={m[1] ? decodeURIComponent(m[1]) : undefined} />;
  if ((m = r.match(/^\/(p|m)\/([^/]+)\/([^/]+)$/))) return <Screen plugin={decodeURIComponent(m[2])} screen={decodeURIComponent(m[3])} modal={m[1] === 'm'} />;
  if (r === '/plugins') return <Plugins />;
  if (r === '/install') return <Install />;
  if ((m = r.match(/^\/plugins\/([^/]+)$/))) return <PluginPage id={decodeURIComponent(m[1])} />;
  if ((m = r.match(/^\/settings(?:\/([^/]+))?$/))) return <Settings page={m[1]} />;
  return <main id="main"><h1>{t('notFound')}</h1><Link href="/">{t('nav.dashboard')}</Link></main>;
}

export { say, errText, Link, runAsUser };

function App() {
  const [needToken, setNeed] = useState(false);
  useEffect(() => { get('/v1/health').catch((e) => { if (e instanceof APIError && e.status === 401) setNeed(true); }); }, []);
  void langChoice.value; void themeChoice.value;
  if (needToken) return <TokenForm />;
  return (
    <div class="shell">
      <a class="skip" href="#main">{t('app.skip')}</a>
      <Nav />
      <Page />
      <ConsentDialog />
      {toast.value ? <div class="toast" role="status">{toast.value}</div> : <div class="toast-empty" role="status" />}
    </div>
  );
}

function TokenForm() {
  const [v, setV] = useState('');
  return (
    <main id="main" class="token">
      <form onSubmit={(e) => { e.preventDefault(); setToken(v.trim()); location.reload(); }}>
        <h1>{t('token.title')}</h1><p>{t('token.text')}</p>
        <label for="token">{t('token.label')}</label><input id="token" type="password" autocomplete="off" value={v} onInput={(e) => setV((e.target as HTMLInputElement).value)} />
        <button type="submit" class="primary">{t('token.save')}</button>
      </form>
    </main>
  );
}

effect(() => { void locale.value; void themeChoice.value; applyDoc(); });
render(<App />, document.getElementById('app')!);
// The first Markdown render pays for marked's and DOMPurify's set-up (tens of ms); do it while
// idle so the first streamed token does not.
const idle = (window as any).requestIdleCallback || ((f: () => void) => setTimeout(f, 200));
idle(() => renderMarkdown('**warm** [up](https://example.invalid)\n- a\n\n`b`'));
void api; void put; void del;
