// The card-share viewer page (/w/card-share/view?c={id}#k=…; seed 003 “# 插件指南”): a friend
// opens the share link and sees the sharer's campus card payment code as a QR code, refreshed
// while the share runs. The code is decrypted here with the key from the #k= fragment; the
// server only relays ciphertext. Frames from the owner are validated before use, the code is
// removed when the share ends, expires or pauses, and the key leaves the address bar once the
// seat is claimed (a reload resumes from this tab's sessionStorage). No inline script or style.
import qrcode from 'qrcode-generator';
import { deriveShare, newPeerKeys, peerKey, open, seal, unb64u, b64u } from '../protocol.js';
import { readLink, api, connect, LinkError, showDetail, viewerLang } from '../share.js';

const $ = (id) => document.getElementById(id);
const lang = viewerLang;

const TEXT = {
  zh: {
    title: '校园卡付款码',
    from: (n) => `${n} 分享给你的付款码`,
    loading: '读取分享…',
    joining: '正在加入…',
    waiting: '等待分享者上线…',
    live: '付款码已更新,可以出示给收银员扫码',
    paused: '分享者的付款码暂时无法刷新',
    reconnecting: '连接断开,正在重连…',
    taken: '这个链接已经有人在使用(每次分享只能一个人查看)',
    badKey: '链接不完整或密钥不对,无法解密',
    replaced: '已在别的页面打开',
    closed: { owner: '分享已结束', expired: '分享已过期', revoked: '分享已撤销', locked: '分享已锁定', server: '服务器关闭了分享', kicked: '分享者已将你移出' },
    gone: '分享已结束',
    left: (mmss) => `还剩 ${mmss}`,
    age: (s, n) => (s < 5 ? `刚刚更新 · 第 ${n} 个` : `${s} 秒前更新 · 第 ${n} 个`),
    stale: '付款码可能已失效,等待刷新…',
    note: '付款码在你的浏览器里用分享链接中的密钥解密,服务器只转发密文。请勿截图转发。',
    qr: '付款码二维码',
    failed: (m) => `出错了:${m}`,
  },
  en: {
    title: 'Campus card payment code',
    from: (n) => `Shared with you by ${n}`,
    loading: 'Reading the share…',
    joining: 'Joining…',
    waiting: 'Waiting for the sharer to come online…',
    live: 'Code refreshed: show it to the cashier to scan',
    paused: 'The sharer’s payment code can’t be refreshed right now',
    reconnecting: 'Connection lost, reconnecting…',
    taken: 'Someone is already using this link (one viewer per share)',
    badKey: 'The link is incomplete or its key is wrong, so nothing can be decrypted',
    replaced: 'Opened on another page',
    closed: { owner: 'The share has ended', expired: 'The share has expired', revoked: 'The share was revoked', locked: 'The share is locked', server: 'The server closed the share', kicked: 'The sharer removed you' },
    gone: 'The share has ended',
    left: (mmss) => `${mmss} left`,
    age: (s, n) => (s < 5 ? `Just refreshed · code ${n}` : `Refreshed ${s} s ago · code ${n}`),
    stale: 'The code may have expired; waiting for a fresh one…',
    note: 'The code is decrypted in your browser with the key in the share link; the server only relays ciphertext. Please don’t forward screenshots.',
    qr: 'Payment code QR',
    failed: (m) => `Something went wrong: ${m}`,
  },
}[lang];

const state = { expiresAt: 0, code: null, seq: 0, at: 0, refreshS: 30, receivedAt: 0, over: false, wake: null };
// seat and seatID are this tab's claim once it holds one (see loadSeat).
let seat = null;
let seatID = '';

function setStatus(s, text) {
  const el = $('status');
  el.dataset.state = s;
  el.textContent = text;
  document.body.dataset.state = s;
}

// hideCode removes the code from the page: it is money, and must not outlive the share.
function hideCode() {
  state.code = null;
  $('card').hidden = true;
  $('qr').replaceChildren();
  $('code').textContent = '';
  $('fresh').textContent = '';
  releaseWake();
}

// closedText says why the share ended; a reason the page does not know (the server's word,
// "__proto__" included) is just "ended".
function closedText(reason) {
  return typeof reason === 'string' && Object.hasOwn(TEXT.closed, reason) ? TEXT.closed[reason] : TEXT.gone;
}

function end(text) {
  state.over = true;
  hideCode();
  dropSeat();
  $('expiry').textContent = '';
  setStatus('closed', text);
}

function fail(text) {
  hideCode();
  setStatus('error', text);
}

// drawQR draws text as an SVG QR code (error correction M), built from DOM nodes so the strict
// CSP (no inline style) holds.
function drawQR(text) {
  const q = qrcode(0, 'M');
  q.addData(text);
  q.make();
  const n = q.getModuleCount();
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${n + 8} ${n + 8}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', TEXT.qr);
  svg.setAttribute('shape-rendering', 'crispEdges');
  const bg = document.createElementNS(ns, 'rect');
  bg.setAttribute('class', 'bg');
  bg.setAttribute('width', String(n + 8));
  bg.setAttribute('height', String(n + 8));
  let d = '';
  for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) if (q.isDark(y, x)) d += `M${x + 4} ${y + 4}h1v1h-1z`;
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', d);
  svg.append(bg, path);
  $('qr').replaceChildren(svg);
}

// validCode accepts only the card-share code frame, version 1, newer than the last one: drawn
// later (at), or at the same time with a higher seq. The order is by at first because the
// sharer's seq starts again at 1 when its host restarts and resumes the share, while a frame the
// server replays keeps the at it was drawn with. The last code again (the sharer's answer to a
// reload's hello) is shown when no code is.
function validCode(m) {
  if (
    !(m && typeof m === 'object' && m.t === 'code' && m.v === 1 &&
      typeof m.code === 'string' && m.code.length > 0 && m.code.length <= 512 && /^[\x21-\x7e]+$/.test(m.code) &&
      Number.isSafeInteger(m.seq) && m.seq >= 1 && Number.isSafeInteger(m.at) && m.at > 0 &&
      Number.isSafeInteger(m.refreshS) && m.refreshS >= 1 && m.refreshS <= 3600)
  )
    return false;
  if (m.at !== state.at) return m.at > state.at;
  return m.seq > state.seq || (m.seq === state.seq && !state.code);
}

function showCode(m) {
  if (state.over) return; // a code after the share ended here is not shown
  state.code = m.code;
  state.seq = m.seq;
  state.at = m.at;
  state.refreshS = m.refreshS;
  state.receivedAt = Date.now();
  if (seat) {
    // A reload of this tab must not take an older frame again: the order goes with the seat.
    seat.at = m.at;
    seat.seq = m.seq;
    saveSeat(seatID, seat);
  }
  drawQR(m.code);
  $('code').textContent = m.code.replace(/(.{4})(?=.)/g, '$1 ');
  const card = $('card');
  card.hidden = false;
  card.dataset.seq = String(m.seq);
  card.dataset.stale = 'false';
  card.classList.remove('fresh');
  void card.offsetWidth; // restart the refresh flash
  card.classList.add('fresh');
  setStatus('live', TEXT.live);
  tick();
  keepAwake();
}

function mmss(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, '0')}`;
}

// tick updates the countdown and the code's age once a second; at expiry the code goes.
function tick() {
  if (state.over) return;
  const now = Date.now();
  if (state.expiresAt) {
    if (now >= state.expiresAt) return end(TEXT.closed.expired);
    $('expiry').textContent = TEXT.left(mmss(state.expiresAt - now));
  }
  if (state.code) {
    const age = Math.floor((now - state.receivedAt) / 1000);
    const stale = age > state.refreshS * 2 + 5;
    $('card').dataset.stale = String(stale);
    $('fresh').textContent = stale ? TEXT.stale : TEXT.age(age, state.seq);
  }
}

// keepAwake asks the browser to keep the screen on while a code is shown (where it can).
async function keepAwake() {
  if (state.wake || !navigator.wakeLock || document.visibilityState !== 'visible') return;
  try {
    state.wake = await navigator.wakeLock.request('screen');
    state.wake.addEventListener('release', () => (state.wake = null));
  } catch {}
}

function releaseWake() {
  state.wake?.release().catch(() => {});
  state.wake = null;
}

// seat is this tab's claim on the channel: the peer token and key, kept in sessionStorage so a
// reload resumes it (the key is then gone from the address bar).
function loadSeat(id) {
  try {
    const s = JSON.parse(sessionStorage.getItem(`card-share:${id}`) ?? 'null');
    if (s && typeof s.peerToken === 'string' && typeof s.key === 'string')
      return {
        peerToken: s.peerToken,
        key: unb64u(s.key, 'key'),
        meta: s.meta,
        at: Number.isSafeInteger(s.at) ? s.at : 0,
        seq: Number.isSafeInteger(s.seq) ? s.seq : 0,
      };
  } catch {}
  return null;
}

function saveSeat(id, seat) {
  try {
    sessionStorage.setItem(
      `card-share:${id}`,
      JSON.stringify({ peerToken: seat.peerToken, key: b64u(seat.key), meta: seat.meta, at: seat.at ?? 0, seq: seat.seq ?? 0 }),
    );
  } catch {}
}

// dropSeat forgets this tab's seat once the share is over: the peer token and key must not
// stay where another page of the same provider, opened later in this tab, could read them.
function dropSeat() {
  try {
    if (seatID) sessionStorage.removeItem(`card-share:${seatID}`);
  } catch {}
}

function showMeta(meta) {
  if (meta && typeof meta.nameHint === 'string' && meta.nameHint.length <= 40 && meta.nameHint) $('from').textContent = TEXT.from(meta.nameHint);
  if (meta && Number.isSafeInteger(meta.refreshS) && meta.refreshS >= 1 && meta.refreshS <= 3600) state.refreshS = meta.refreshS;
}

async function main() {
  document.documentElement.lang = lang === 'en' ? 'en' : 'zh-CN';
  document.title = `${TEXT.title} · PKU harness`;
  $('title').textContent = TEXT.title;
  $('note').textContent = TEXT.note;
  setStatus('loading', TEXT.loading);

  const id = new URLSearchParams(location.search).get('c') ?? '';
  const hasKey = /(^#|&)k=/.test(location.hash);
  seat = hasKey ? null : loadSeat(id);
  seatID = id;
  if (seat) {
    state.at = seat.at;
    state.seq = seat.seq;
  }
  const base = `/v1/c/${encodeURIComponent(id)}`;
  if (!seat) {
    const link = readLink(lang);
    const { authKey, encKey } = deriveShare(link.k);
    const info = await api('GET', `/v1/c/${encodeURIComponent(link.id)}`);
    if (info.status !== 'open') return end(closedText(info.status));
    let meta;
    try {
      meta = open(encKey, info.meta);
    } catch {
      return fail(TEXT.badKey);
    }
    showMeta(meta);
    const chanPub = unb64u(info.chanPub, 'chanPub');
    const me = newPeerKeys();
    const key = peerKey(me.priv, chanPub, encKey, chanPub, me.pub);
    me.priv.fill(0);
    setStatus('joining', TEXT.joining);
    let joined;
    try {
      joined = await api('POST', `${base}/join`, { authKey: b64u(authKey), peerPub: b64u(me.pub) });
    } catch (e) {
      if (e.code === 'conflict') return fail(TEXT.taken);
      if (e.code === 'forbidden') return fail(TEXT.badKey);
      if (e.code === 'gone') return end(TEXT.gone);
      throw e;
    }
    seat = { peerToken: joined.peerToken, key, meta, at: 0, seq: 0 };
    seatID = link.id;
    saveSeat(link.id, seat);
    // The seat is ours: the key need not stay in the address bar or the history.
    history.replaceState(null, '', location.pathname + location.search);
  } else {
    const info = await api('GET', base);
    if (info.status !== 'open') return end(closedText(info.status));
    showMeta(seat.meta);
  }
  setInterval(tick, 1000);
  document.addEventListener('visibilitychange', () => state.code && keepAwake());

  const onFrame = (f, send) => {
    switch (f?.t) {
      case 'hello':
        if (Number.isFinite(f.expiresAt)) state.expiresAt = f.expiresAt;
        tick();
        if (!f.ownerOnline) {
          hideCode();
          setStatus('waiting', TEXT.waiting);
        } else if (!state.code) setStatus('waiting', TEXT.waiting);
        // Our hello asks the sharer for a fresh code (on every connect and reconnect).
        send({ t: 'msg', env: seal(seat.key, { t: 'hello' }) });
        break;
      case 'owner':
        if (!f.online) {
          hideCode();
          setStatus('waiting', TEXT.waiting);
        }
        break;
      case 'extended':
        if (Number.isFinite(f.expiresAt)) state.expiresAt = f.expiresAt;
        tick();
        break;
      case 'msg': {
        // Every frame handled, shown or dropped, is counted (tests wait on it).
        document.body.dataset.frames = String(Number(document.body.dataset.frames ?? 0) + 1);
        let m;
        try {
          m = open(seat.key, f.env);
        } catch {
          break; // not sealed for us: ignore
        }
        if (m?.t === 'paused' && m.v === 1) {
          hideCode();
          setStatus('paused', TEXT.paused);
        } else if (validCode(m)) showCode(m);
        break;
      }
      case 'closed':
        end(closedText(f.reason));
        return 'stop';
    }
    return '';
  };
  connect(base, seat.peerToken, onFrame, (why) => {
    if (why === 'kicked') end(TEXT.closed.kicked);
    else if (why === 'replaced') end(TEXT.replaced);
    else if (!state.over) setStatus('reconnecting', TEXT.reconnecting);
  });
}

main().catch((e) => {
  if (!(e instanceof LinkError)) return fail(TEXT.failed(e.message));
  fail(e.message);
  showDetail($('status'), e.detail);
});
