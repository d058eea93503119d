// What every viewer page does with a share link (seed 003, "分享链接与页面", "通道(对端)"):
// read the channel id from ?c= and the secret from the #k= fragment (which the server never
// sees), call the channel API, and keep the peer's socket open (WebSocket, or the SSE stream
// with POST /send where WebSocket is missing), reconnecting with backoff.
import { unb64u } from './protocol.js';

/** readLink returns the channel id (?c=) and the share secret k (#k=), or throws saying which is missing. */
export function readLink(msg = { id: '链接缺少通道编号 (?c=)', k: '链接缺少密钥 (#k=)' }) {
  const id = new URLSearchParams(location.search).get('c');
  if (!id || !/^[A-Za-z0-9_-]{8,64}$/.test(id)) throw new Error(msg.id);
  const k = new URLSearchParams(location.hash.replace(/^#/, '')).get('k');
  if (!k) throw new Error(msg.k);
  return { id, k: unb64u(k, 'k') };
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
