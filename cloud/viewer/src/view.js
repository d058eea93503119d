// The demo viewer page (/w/demo/view?c={id}#k=…): reads the share secret from the fragment,
// reads the channel's sealed meta, joins with an ephemeral X25519 key, then shows every frame
// the owner sends, decrypted here. The server only ever sees authKey and ciphertext (seed 003,
// "分享链接与页面", "通道(对端)"). No inline script: the page works under the server's strict CSP.
import { deriveShare, newPeerKeys, peerKey, open, seal, unb64u, b64u } from './protocol.js';
import { readLink, api, connect, LinkError, showDetail } from './share.js';

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

  connect(base, joined.peerToken, onFrame, (why) => {
    if (why === 'kicked') setStatus('closed', CLOSED_TEXT.kicked);
    else if (why === 'replaced') setStatus('closed', '已在别处打开');
    else setStatus('reconnecting', '连接断开,正在重连…');
  });
}

main().catch((e) => {
  if (!(e instanceof LinkError)) return fail(`出错了:${e.message}`);
  fail(e.message);
  showDetail($('status'), e.detail);
});
