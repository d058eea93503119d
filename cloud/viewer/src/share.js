// What every viewer page does with a share link (seed 003, "分享链接与页面", "通道(对端)"):
// read the channel id from ?c= and the secret from the #k= fragment (which the server never
// sees), call the channel API, and keep the peer's socket open (WebSocket, or the SSE stream
// with POST /send where WebSocket is missing), reconnecting with backoff.
import { unb64u } from './protocol.js';

/** viewerLang is the language of the viewer pages: 'en' for an English browser, else 'zh'. */
export const viewerLang = /^en\b/i.test(globalThis.navigator?.language || '') ? 'en' : 'zh';

// The words for a friend who opened a broken link: what to do, not what is missing.
const INCOMPLETE = {
  zh: '这个分享链接不完整,请让分享的人重新发给你',
  en: 'This share link is incomplete; ask the person who shared it to send it again',
};

/** LinkError is a share link that cannot be used: message is the plain words in the viewer's
 * language, detail what is wrong with it (for the small print, never the main message). */
export class LinkError extends Error {
  constructor(detail, lang = viewerLang) {
    super(INCOMPLETE[lang] ?? INCOMPLETE.zh);
    this.name = 'LinkError';
    this.detail = detail;
  }
}

/** readLink returns the channel id (?c=) and the share secret k (#k=), or throws a LinkError
 * whose detail says which is missing or malformed. */
export function readLink(lang = viewerLang) {
  const id = new URLSearchParams(location.search).get('c');
  if (!id || !/^[A-Za-z0-9_-]{8,64}$/.test(id)) throw new LinkError(id ? 'malformed channel id (?c=)' : 'no channel id (?c=)', lang);
  const k = new URLSearchParams(location.hash.replace(/^#/, '')).get('k');
  if (!k) throw new LinkError('no key (#k=)', lang);
  try {
    return { id, k: unb64u(k, 'k') };
  } catch (e) {
    throw new LinkError(`malformed key (#k=): ${e.message}`, lang);
  }
}

/** showDetail puts the technical detail of a failure in small print under the status line el
 * (a <p class="detail" id="detail">, created once). */
export function showDetail(el, detail) {
  let d = document.getElementById('detail');
  if (!d) {
    d = document.createElement('p');
    d.id = 'detail';
    d.className = 'detail';
    el.after(d);
  }
  d.textContent = detail;
}

/** api calls the channel API; a non-2xx answer throws an Error whose code is the wire code. */
export async function api(method, path, body, token) {
  const headers = body ? { 'content-type': 'application/json' } : {};
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(path, {
    method,
    headers,
    body: body ? JSON.stringify(body) : undefined,
    cache: 'no-store',
    credentials: 'omit',
  });
  const json = await res.json().catch(() => null);
  if (!res.ok) {
    const code = json?.error?.code ?? String(res.status);
    const err = new Error(`${code}: ${json?.error?.message ?? res.statusText}`);
    err.code = code;
    throw err;
  }
  return json;
}

/**
 * connect keeps the peer's socket to base (/v1/c/{id}) open with token and hands every frame
 * to onFrame(frame, send); onFrame returns 'stop' when the channel is over. onDrop(why) is
 * told when the socket is lost for good ('kicked', 'replaced') or for now ('reconnecting').
 */
export function connect(base, token, onFrame, onDrop) {
  const wsURL = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}${base}/ws?t=${encodeURIComponent(token)}`;
  if (typeof WebSocket === 'function') connectWS(wsURL, onFrame, onDrop);
  else connectSSE(base, token, onFrame);
}

// connectWS keeps one WebSocket open, reconnecting with exponential backoff and jitter unless
// the channel was closed, this viewer kicked (4003) or replaced (4009).
function connectWS(url, onFrame, onDrop, attempt = 0) {
  const ws = new WebSocket(url);
  let stopped = false;
  let ping;
  const send = (f) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(f));
  ws.onopen = () => {
    attempt = 0;
    ping = setInterval(() => send({ t: 'ping' }), 25000);
  };
  ws.onmessage = (ev) => {
    let f;
    try {
      f = JSON.parse(ev.data);
    } catch {
      return;
    }
    if (onFrame(f, send) === 'stop') stopped = true;
  };
  ws.onclose = (ev) => {
    clearInterval(ping);
    if (stopped || ev.code === 4010) return;
    if (ev.code === 4003) return onDrop('kicked');
    if (ev.code === 4009) return onDrop('replaced');
    const delay = Math.min(30000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);
    onDrop('reconnecting');
    setTimeout(() => connectWS(url, onFrame, onDrop, attempt + 1), delay);
  };
}

// connectSSE is the fallback for webviews without WebSocket: events in, POST /send out.
function connectSSE(base, token, onFrame) {
  const es = new EventSource(`${base}/events?t=${encodeURIComponent(token)}`);
  const send = (f) =>
    fetch(`${base}/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(f),
    }).catch(() => {});
  es.onmessage = (ev) => {
    let f;
    try {
      f = JSON.parse(ev.data);
    } catch {
      return;
    }
    if (onFrame(f, send) === 'stop') es.close();
  };
}
