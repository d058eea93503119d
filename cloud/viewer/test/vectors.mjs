// Checks the viewer's protocol code against cloud/protocol/testdata/vectors.json, the bytes the
// Go package produces. Bundled by `npm run build` into testdata/vectors-check.mjs so that the Go
// test (TestJSVectors) can run it with plain node, without node_modules.
// Usage: node vectors-check.mjs PATH/TO/vectors.json — prints "ok: N checks" or the failures.
import { readFileSync } from 'node:fs';
import { x25519 } from '@noble/curves/ed25519.js';
import { deriveShare, joinHash, peerKey, seal, open, openRaw, b64u, unb64u } from '../src/protocol.js';

const v = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const failures = [];
let checks = 0;
function eq(name, got, want) {
  checks++;
  if (got !== want) failures.push(`${name}: got ${got}, want ${want}`);
}
function throws(name, f) {
  checks++;
  try {
    f();
    failures.push(`${name}: no error`);
  } catch {}
}
const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

const k = v.keys;
const { authKey, encKey } = deriveShare(unb64u(k.shareSecret));
eq('authKey', b64u(authKey), k.authKey);
eq('encKey', b64u(encKey), k.encKey);
eq('joinHash', joinHash(authKey), k.joinHash);
const chanPriv = unb64u(k.chanPriv);
const peerPriv = unb64u(k.peerPriv);
const chanPub = x25519.getPublicKey(chanPriv);
const peerPub = x25519.getPublicKey(peerPriv);
eq('chanPub', b64u(chanPub), k.chanPub);
eq('peerPub', b64u(peerPub), k.peerPub);
eq('shared', hex(x25519.getSharedSecret(peerPriv, chanPub)), k.sharedHex);
eq('peerKey (viewer side)', b64u(peerKey(peerPriv, chanPub, encKey, chanPub, peerPub)), k.peerKey);
eq('peerKey (owner side)', b64u(peerKey(chanPriv, peerPub, encKey, chanPub, peerPub)), k.peerKey);

const utf8 = new TextDecoder('utf-8', { fatal: true });
for (const e of v.envelopes) {
  const key = unb64u(e.key);
  eq(`${e.name}: open`, utf8.decode(openRaw(key, e.envelope)), e.plaintext);
  if (e.plaintext !== '') {
    const value = JSON.parse(e.plaintext);
    eq(`${e.name}: open JSON`, JSON.stringify(open(key, e.envelope)), JSON.stringify(value));
    const sealed = seal(key, value, unb64u(e.nonce));
    eq(`${e.name}: seal`, JSON.stringify(sealed), JSON.stringify(e.envelope));
  }
  const c = unb64u(e.envelope.c);
  c[0] ^= 1;
  throws(`${e.name}: tampered ciphertext`, () => openRaw(key, { ...e.envelope, c: b64u(c) }));
  const wrong = key.slice();
  wrong[31] ^= 0x80;
  throws(`${e.name}: wrong key`, () => openRaw(wrong, e.envelope));
}
throws('non-canonical base64url', () => unb64u('AB'));
throws('padding', () => unb64u('AA=='));

if (failures.length) {
  console.error(failures.join('\n'));
  process.exit(1);
}
console.log(`ok: ${checks} checks`);
