// One renderer of the genui catalogue (genui.Catalog, docs/GENUI.md): it
// draws the tree POST /v1/ui/draw resolved (templates already evaluated by
// the host), for dashboard widgets, plugin screens and ui__render documents
// in the chat alike. Unknown components draw nothing; text is always text.
import { Component, ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import qrcode from 'qrcode-generator';
import { renderMarkdown } from './markdown';
import { t } from './i18n';

export type GNode = { type: string; [k: string]: any };
export interface Action { tool: string; args: Record<string, any>; confirm?: string; then?: string }
export interface Ctx {
  onAction?: (a: Action) => Promise<void>;
  onField?: (name: string, value: any) => void;
  form?: Record<string, any>;
}

const icons: Record<string, string> = {
  card: '💳', wifi: '📶', book: '📖', bell: '🔔', clock: '🕒', location: '📍', sparkles: '✨', key: '🔑', person: '👤', qr: '▦',
  warning: '⚠️', check: '✓', calendar: '📅', bus: '🚌', food: '🍜', wallet: '👛', library: '🏛️', room: '🚪', school: '🎓', ticket: '🎫',
  medal: '🏅', chart: '📊', search: '🔍', globe: '🌐', lock: '🔒', info: 'ℹ️', news: '📰', people: '👥', star: '★', refresh: '↻',
};

export function Icon({ name, label, tone }: { name: string; label?: string; tone?: string }) {
  return <span class={`g-icon tone-${tone || 'default'}`} role={label ? 'img' : undefined} aria-label={label} aria-hidden={label ? undefined : 'true'}>{icons[name] || '•'}</span>;
}

function text(v: any): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function lines(n: any) { return typeof n === 'number' && n > 0 ? { WebkitLineClamp: String(n) } : undefined; }

function Sparkline({ values, label, tone }: { values: any[]; label?: string; tone?: string }) {
  const nums = (values || []).map((v) => (typeof v === 'number' ? v : null));
  const real = nums.filter((v): v is number => v !== null);
  const min = Math.min(...real), max = Math.max(...real);
  const w = 100, h = 28, span = max - min || 1, step = nums.length > 1 ? w / (nums.length - 1) : 0;
  let d = '', pen = false;
  nums.forEach((v, i) => {
    if (v === null) { pen = false; return; }
    const x = (i * step).toFixed(1), y = (h - 2 - ((v - min) / span) * (h - 4)).toFixed(1);
    d += (pen ? 'L' : 'M') + x + ' ' + y;
    pen = true;
  });
  return <svg class={`g-spark tone-${tone || 'accent'}`} viewBox={`0 0 ${w} ${h}`} preserveAspectRatio="none" role="img" aria-label={label || ''}><path d={d} /></svg>;
}

function Ring({ value, max, label, caption, tone }: any) {
  const m = typeof max === 'number' && max > 0 ? max : 1;
  const f = Math.max(0, Math.min(1, (Number(value) || 0) / m));
  const r = 16, c = 2 * Math.PI * r;
  return (
    <figure class="g-ring">
      <svg viewBox="0 0 40 40" role="img" aria-label={`${label || ''} ${Math.round(f * 100)}%`}>
        <circle class="track" cx="20" cy="20" r={r} />
        <circle class={`arc tone-${tone || 'accent'}`} cx="20" cy="20" r={r} stroke-dasharray={`${(f * c).toFixed(2)} ${c.toFixed(2)}`} transform="rotate(-90 20 20)" />
        {label ? <text x="20" y="23" text-anchor="middle">{text(label)}</text> : null}
      </svg>
      {caption ? <figcaption>{text(caption)}</figcaption> : null}
    </figure>
  );
}

function QR({ value, label, share }: { value: string; label?: string; share?: boolean }) {
  const s = text(value).slice(0, 1000);
  let cells: boolean[][] = [];
  try {
    const q = qrcode(0, 'M');
    q.addData(s);
    q.make();
    const n = q.getModuleCount();
    cells = Array.from({ length: n }, (_, r) => Array.from({ length: n }, (_, c) => q.isDark(r, c)));
  } catch { return <p class="g-text tone-critical">{t('qr.tooLong')}</p>; }
  const n = cells.length;
  let d = '';
  cells.forEach((row, y) => row.forEach((on, x) => { if (on) d += `M${x + 2} ${y + 2}h1v1h-1z`; }));
  return (
    <figure class="g-qr">
      <svg viewBox={`0 0 ${n + 4} ${n + 4}`} role="img" aria-label={label || s} shape-rendering="crispEdges"><rect width={n + 4} height={n + 4} class="bg" /><path d={d} /></svg>
      {label ? <figcaption>{text(label)}</figcaption> : null}
      {share && s ? <ShareActions value={s} /> : null}
    </figure>
  );
}

// ShareActions are a QRCode's "Copy link" and "Share…" (share: true): the code's text goes to the
// clipboard or the system share sheet on this device only, never back to the host or the model.
// "Share…" is there only where the browser has navigator.share.
function ShareActions({ value }: { value: string }) {
  const [note, setNote] = useState('');
  const link = /^https?:\/\//i.test(value);
  const copy = async () => {
    try { await navigator.clipboard.writeText(value); setNote(t(link ? 'qr.copied' : 'qr.copiedText')); } catch { setNote(t('qr.copyFailed')); }
  };
  const canShare = typeof navigator.share === 'function';
  const shareIt = async () => {
    try { await navigator.share(link ? { url: value } : { text: value }); } catch (e) { if ((e as Error)?.name !== 'AbortError') setNote(t('qr.shareFailed')); }
  };
  return (
    <div class="g-qr-share">
      <div class="actions">
        <button type="button" class="qr-copy" onClick={copy}>{t(link ? 'qr.copyLink' : 'qr.copyText')}</button>
        {canShare ? <button type="button" class="qr-share" onClick={shareIt}>{t('qr.share')}</button> : null}
      </div>
      <p class="detail" role="status">{note}</p>
    </div>
  );
}

function GButton({ node, ctx, row }: { node: GNode; ctx: Ctx; row?: any }) {
  const [busy, setBusy] = useState(false);
  const a: Action = node.action;
  return (
    <button type="button" class={row ? 'g-listrow tap' : `g-btn ${node.style || 'secondary'}`} disabled={busy || !ctx.onAction} aria-busy={busy}
      onClick={async () => {
        if (!ctx.onAction) return;
        if (a.confirm && !window.confirm(a.confirm)) return;
        setBusy(true);
        try { await ctx.onAction(a); } finally { setBusy(false); }
      }}>
      {row ?? <>{node.icon ? <Icon name={node.icon} /> : null}{text(node.text)}</>}
    </button>
  );
}

let fieldSeq = 0;
function Field({ node, ctx }: { node: GNode; ctx: Ctx }) {
  const [id] = useState(() => 'f' + ++fieldSeq);
  const value = ctx.form && node.name in ctx.form ? ctx.form[node.name] : node.value ?? '';
  const set = (v: any) => ctx.onField?.(node.name, v);
  const input = node.input || 'text';
  return (
    <div class="g-field">
      <label for={id}>{text(node.label)}</label>
      {input === 'select' ? (
        <select id={id} value={text(value)} onChange={(e) => set((e.target as HTMLSelectElement).value)}>
          {(node.options || []).map((o: any) => typeof o === 'object' && o ? <option value={text(o.value)}>{text(o.label ?? o.value)}</option> : <option value={text(o)}>{text(o)}</option>)}
        </select>
      ) : (
        <input id={id} type={input} value={text(value)} placeholder={text(node.placeholder)}
          onInput={(e) => { const v = (e.target as HTMLInputElement).value; set(input === 'number' ? (v === '' ? null : Number(v)) : v); }} />
      )}
    </div>
  );
}

function Switch({ node, ctx }: { node: GNode; ctx: Ctx }) {
  const [id] = useState(() => 'f' + ++fieldSeq);
  const on = !!(ctx.form && node.name in ctx.form ? ctx.form[node.name] : node.value);
  return (
    <div class="g-switch">
      <label for={id}>{text(node.label)}</label>
      <button id={id} type="button" role="switch" aria-checked={on} class={on ? 'on' : ''} onClick={() => ctx.onField?.(node.name, !on)}><span /></button>
    </div>
  );
}

function optionList(opts: any[]): { value: any; label: string }[] {
  return (opts || []).map((o) => (o && typeof o === 'object' ? { value: o.value, label: text(o.label ?? o.value) } : { value: o, label: text(o) }));
}

function Segmented({ node, ctx }: { node: GNode; ctx: Ctx }) {
  const [id] = useState(() => 'f' + ++fieldSeq);
  const opts = optionList(node.options);
  const cur = ctx.form && node.name in ctx.form ? ctx.form[node.name] : node.value ?? opts[0]?.value;
  return (
    <fieldset class="segmented g-seg"><legend>{text(node.label)}</legend>
      {opts.map((o, i) => <label key={i}><input type="radio" name={id} checked={o.value === cur} onChange={() => ctx.onField?.(node.name, o.value)} /><span>{o.label}</span></label>)}
    </fieldset>
  );
}

// Beijing time (UTC+8, no daylight saving) for DateTimeField values in Unix ms.
const bj = 8 * 3600 * 1000;
function toLocalInput(ms: any, mode: string): string {
  if (typeof ms !== 'number') return '';
  const iso = new Date(ms + bj).toISOString();
  return mode === 'date' ? iso.slice(0, 10) : mode === 'time' ? iso.slice(11, 16) : iso.slice(0, 16);
}
function fromLocalInput(v: string, mode: string): number | null {
  if (!v) return null;
  const s = mode === 'date' ? v + 'T00:00' : mode === 'time' ? '1970-01-01T' + v : v;
  const ms = Date.parse(s + ':00Z');
  return isNaN(ms) ? null : ms - bj;
}

function DateTimeField({ node, ctx }: { node: GNode; ctx: Ctx }) {
  const [id] = useState(() => 'f' + ++fieldSeq);
  const mode = node.mode || 'datetime';
  const v = ctx.form && node.name in ctx.form ? ctx.form[node.name] : node.value;
  return (
    <div class="g-field">
      <label for={id}>{text(node.label)}</label>
      <input id={id} type={mode === 'datetime' ? 'datetime-local' : mode} value={toLocalInput(v, mode)} onInput={(e) => ctx.onField?.(node.name, fromLocalInput((e.target as HTMLInputElement).value, mode))} />
    </div>
  );
}

function ListRow({ node, ctx }: { node: GNode; ctx: Ctx }) {
  const body = (
    <>
      {node.icon ? <Icon name={node.icon} /> : null}
      <span class="name">{text(node.title)}{node.subtitle ? <small>{text(node.subtitle)}</small> : null}</span>
      {node.value !== undefined && node.value !== null ? <span class="value">{text(node.value)}</span> : null}
    </>
  );
  if (!node.action) return <div class="g-listrow">{body}</div>;
  return <GButton node={{ type: 'Button', style: 'plain', action: node.action, text: '' }} ctx={ctx} row={body} />;
}

// Boundary keeps a node that fails to draw from taking its card down.
class Boundary extends Component<{ children: ComponentChildren }, { failed: boolean }> {
  state = { failed: false };
  componentDidCatch() { this.setState({ failed: true }); }
  render() { return this.state.failed ? <span class="g-text tone-muted">{t('widget.partFailed')}</span> : this.props.children; }
}

export function GenUI({ node, ctx }: { node: GNode; ctx: Ctx }) {
  return <Boundary><Draw node={node} ctx={ctx} /></Boundary>;
}

function kids(list: GNode[] | undefined, ctx: Ctx) { return (list || []).map((c, i) => <Draw key={i} node={c} ctx={ctx} />); }

export function Draw({ node, ctx }: { node: GNode; ctx: Ctx }): any {
  if (!node || typeof node !== 'object') return null;
  switch (node.type) {
    case 'Text': {
      const Tag: any = node.style === 'title' ? 'h3' : 'p';
      return <Tag class={`g-text s-${node.style || 'body'} tone-${node.tone || 'default'}${node.maxLines ? ' clamp' : ''}`} style={lines(node.maxLines)}>{text(node.text)}</Tag>;
    }
    case 'Markdown':
      return <div class={`g-md${node.maxLines ? ' clamp' : ''}`} style={lines(node.maxLines)} dangerouslySetInnerHTML={{ __html: renderMarkdown(text(node.text)) }} />;
    case 'Stat':
      return (
        <div class="g-stat">
          <div class="label">{node.icon ? <Icon name={node.icon} /> : null}{text(node.label)}</div>
          <div class={`value tone-${node.tone || 'default'}`}>{text(node.value)}{node.unit ? <span class="unit">{text(node.unit)}</span> : null}</div>
          {node.caption ? <div class="caption">{text(node.caption)}</div> : null}
        </div>
      );
    case 'Ring': return <Ring {...node} />;
    case 'Sparkline': return <Sparkline values={node.values} label={node.label} tone={node.tone} />;
    case 'Icon': return <Icon name={node.name} label={node.label} tone={node.tone} />;
    case 'Chip': return <span class={`g-chip tone-${node.tone || 'default'}`}>{node.icon ? <Icon name={node.icon} /> : null}{text(node.text)}</span>;
    case 'Row': return <div class={`g-row gap-${node.gap || 'sm'} align-${node.align || 'start'}${node.wrap ? ' wrap' : ''}`}>{kids(node.children, ctx)}</div>;
    case 'Column': return <div class={`g-col gap-${node.gap || 'sm'}`}>{kids(node.children, ctx)}</div>;
    case 'Grid': return <div class={`g-grid cols-${Math.max(1, Math.min(6, Number(node.columns) || 2))}`}>{kids(node.children, ctx)}</div>;
    case 'List':
      if (!node.children?.length) return node.empty ? <Draw node={node.empty} ctx={ctx} /> : null;
      return <ul class={`g-list${node.dividers ? ' dividers' : ''}`}>{node.children.map((c: GNode, i: number) => <li key={i}><Draw node={c} ctx={ctx} /></li>)}</ul>;
    case 'EmptyState':
      return <div class="g-empty">{node.icon ? <Icon name={node.icon} /> : null}<p class="title">{text(node.title)}</p>{node.text ? <p class="more">{text(node.text)}</p> : null}</div>;
    case 'Divider': return <hr class="g-divider" />;
    case 'Button': return <GButton node={node} ctx={ctx} />;
    case 'Field': return <Field node={node} ctx={ctx} />;
    case 'QRCode': return <QR value={node.value} label={node.label} share={node.share === true} />;
    case 'Skeleton': return <Skeleton rows={Math.max(1, Math.min(8, Number(node.lines) || 3))} />;
    case 'Switch': return <Switch node={node} ctx={ctx} />;
    case 'Segmented': return <Segmented node={node} ctx={ctx} />;
    case 'DateTimeField': return <DateTimeField node={node} ctx={ctx} />;
    case 'ListGroup': return <section class="g-listgroup">{node.title ? <h3>{text(node.title)}</h3> : null}<div class="rows">{kids(node.children, ctx)}</div></section>;
    case 'ListRow': return <ListRow node={node} ctx={ctx} />;
  }
  // A type this renderer does not know (a newer catalogue): say so, never draw nothing.
  return <p class="g-text s-caption tone-muted g-unsupported" role="note">{t('genui.unsupported', { type: String(node.type) })}</p>;
}

export function Skeleton({ rows = 3 }: { rows?: number }) {
  return <div class="g-col gap-sm" aria-busy="true" aria-label={t('state.loading')}>{Array.from({ length: rows }, (_, i) => <div key={i} class="g-skeleton" />)}</div>;
}
