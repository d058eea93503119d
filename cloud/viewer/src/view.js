// The demo viewer page (/w/demo/view?c={id}#k=…): reads the share secret from the fragment,
// reads the channel's sealed meta, joins with an ephemeral X25519 key, then shows every frame
// the owner sends, decrypted here. The server only ever sees authKey and ciphertext (seed 003,
// "分享链接与页面", "通道(对端)"). No inline script: the page works under the server's strict CSP.
import { deriveShare, newPeerKeys, peerKey, open, seal, unb64u, b64u } from './protocol.js';

const MAX_SHOWN = 50;
const $ = (id) => document.getElementById(id);

function setStatus(state, text) {
  const el = $('status');
  el.dataset.state = state;
  el.textContent = text;
  document.body.dataset.state = state;
}

function fail(text) {
  setStatus('error', text);
}

function readLink() {
  const id = new URLSearchParams(location.search).get('c');
  if (!id || !/^[A-Za-z0-9_-]{8,64}$/.test(id)) throw new Error('链接缺少通道编号 (?c=)');
  const k = new URLSearchParams(location.hash.replace(/^#/, '')).get('k');
  if (!k) throw new Error('链接缺少密钥 (#k=)');
  return { id, k: unb64u(k, 'k') };
}

async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
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

function show(value) {
  const list = $('frames');
  const li = document.createElement('li');
  li.className = 'frame';
  const time = document.createElement('time');
  time.textContent = new Date().toLocaleTimeString();
  const pre = document.createElement('pre');
  pre.textContent = JSON.stringify(value, null, 2);
  li.append(time, pre);
  list.prepend(li);
  while (list.children.length > MAX_SHOWN) list.lastElementChild.remove();
  $('count').textContent = String(Number($('count').textContent) + 1);
}

const CLOSED_TEXT = {
  owner: '分享已结束',
  expired: '分享已过期',
  revoked: '分享已撤销',
  locked: '分享已锁定',
  server: '服务器关闭了通道',
  kicked: '你已被移出通道',
};

async function main() {
  const { id, k } = readLink();
  const { authKey, encKey } = deriveShare(k);
  const base = `/v1/c/${encodeURIComponent(id)}`;

  setStatus('loading', '读取通道…');
  const info = await api('GET', base);
  if (info.status !== 'open') return fail(CLOSED_TEXT[info.status] ?? `通道状态:${info.status}`);
  let meta;
  try {
    meta = open(encKey, info.meta);
  } catch {
    return fail('密钥不对:无法解密通道信息');
  }
  $('meta').textContent = JSON.stringify(meta, null, 2);

  const chanPub = unb64u(info.chanPub, 'chanPub');
  const me = newPeerKeys();
  const key = peerKey(me.priv, chanPub, encKey, chanPub, me.pub);
  me.priv.fill(0);

  setStatus('joining', '加入通道…');
  let joined;
  try {
    joined = await api('POST', `${base}/join`, { authKey: b64u(authKey), peerPub: b64u(me.pub) });
  } catch (e) {
    if (e.code === 'conflict') return fail('这个链接已经有人在使用');
    if (e.code === 'forbidden') return fail('密钥不对:服务器拒绝加入');
    throw e;
  }

  // While the owner is offline, show what it left in the mailbox (sealed with encKey).
  const readMailbox = async () => {
    try {
      const res = await fetch(`${base}/mailbox`, { headers: { authorization: `Bearer ${joined.peerToken}` }, cache: 'no-store', credentials: 'omit' });
      if (!res.ok) return;
      const box = await res.json();
      for (const it of box.items ?? []) {
        try {
          show({ mailbox: it.slot, value: open(encKey, it.env) });
        } catch {
          $('dropped').textContent = String(Number($('dropped').textContent) + 1);
        }
      }
    } catch {}
  };

  const onFrame = (f, send) => {
    switch (f?.t) {
      case 'hello':
        setStatus(f.ownerOnline ? 'live' : 'waiting', f.ownerOnline ? '已连接' : '等待分享者上线…');
        send({ t: 'msg', env: seal(key, { t: 'hello' }) });
        if (!f.ownerOnline) readMailbox();
        break;
      case 'owner':
        setStatus(f.online ? 'live' : 'waiting', f.online ? '已连接' : '等待分享者上线…');
        break;
      case 'msg':
        try {
          show(open(key, f.env));
        } catch {
          $('dropped').textContent = String(Number($('dropped').textContent) + 1);
        }
        break;
      case 'closed':
        setStatus('closed', CLOSED_TEXT[f.reason] ?? '分享已结束');
        return 'stop';
      case 'error':
        $('lastError').textContent = `${f.code}: ${f.message}`;
        break;
    }
    return '';
  };

  const wsURL = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}${base}/ws?t=${encodeURIComponent(joined.peerToken)}`;
  if (typeof WebSocket === 'function') connectWS(wsURL, onFrame);
  else connectSSE(base, joined.peerToken, onFrame);
}

// connectWS keeps one WebSocket open, reconnecting with exponential backoff and jitter unless
// the channel was closed, this viewer kicked (4003) or replaced (4009).
function connectWS(url, onFrame, attempt = 0) {
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
    if (ev.code === 4003) return setStatus('closed', CLOSED_TEXT.kicked);
    if (ev.code === 4009) return setStatus('closed', '已在别处打开');
    const delay = Math.min(30000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);
    setStatus('reconnecting', '连接断开,正在重连…');
    setTimeout(() => connectWS(url, onFrame, attempt + 1), delay);
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

main().catch((e) => fail(`出错了:${e.message}`));
