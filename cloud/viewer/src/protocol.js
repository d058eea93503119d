// PKU harness Cloud protocol v1, the viewer's half (seed 003, "通道(所有者)", "通道(对端)",
// "Envelope"): share-secret derivations, the per-peer key and XChaCha20-Poly1305 envelopes.
// Built only from audited primitives (@noble/*); kept byte-for-byte equal to the Go package
// cloud/protocol, which cloud/protocol/testdata/vectors.json pins.
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { x25519 } from '@noble/curves/ed25519.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { randomBytes, concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export const INFO_JOIN = 'pku-harness-cloud/v1/join';
export const INFO_ENC = 'pku-harness-cloud/v1/enc';
export const INFO_PEER = 'pku-harness-cloud/v1/peer';

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const B64_INDEX = (() => {
  const t = new Int16Array(128).fill(-1);
  for (let i = 0; i < B64.length; i++) t[B64.charCodeAt(i)] = i;
  return t;
})();

/** b64u encodes bytes as unpadded base64url. */
export function b64u(bytes) {
  let out = '';
  let i = 0;
  for (; i + 3 <= bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + B64[n & 63];
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i] << 16;
    out += B64[n >> 18] + B64[(n >> 12) & 63];
  } else if (rest === 2) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63];
  }
  return out;
}

/** unb64u decodes unpadded base64url strictly: any other character, padding or a dangling
 * character is an error, as in Go's base64.RawURLEncoding.Strict. */
export function unb64u(s, what = 'value') {
  if (typeof s !== 'string') throw new Error(`${what}: not a string`);
  if (s.length % 4 === 1) throw new Error(`${what}: bad base64url length ${s.length}`);
  const out = new Uint8Array(Math.floor((s.length * 3) / 4));
  let o = 0;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const v = c < 128 ? B64_INDEX[c] : -1;
    if (v < 0) throw new Error(`${what}: bad base64url character at ${i}`);
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  if (bits > 0 && (acc & ((1 << bits) - 1)) !== 0) throw new Error(`${what}: non-canonical base64url`);
  return out.subarray(0, o);
}

/** deriveShare turns the share secret k (the #k= fragment) into authKey (proves the link to the
 * server on join) and encKey (opens meta; mixed into every per-peer key). */
export function deriveShare(k) {
  if (k.length !== 32) throw new Error(`share secret: ${k.length} bytes, want 32`);
  return {
    authKey: hkdf(sha256, k, undefined, utf8ToBytes(INFO_JOIN), 32),
    encKey: hkdf(sha256, k, undefined, utf8ToBytes(INFO_ENC), 32),
  };
}

/** joinHash is base64url(sha256(authKey)), what the channel was created with. */
export function joinHash(authKey) {
  return b64u(sha256(authKey));
}

/** peerKey is HKDF(X25519(priv, otherPub) ‖ encKey, salt = chanPub ‖ peerPub, info = peer). The
 * viewer passes its own private key and chanPub; the owner its channel key and peerPub. */
export function peerKey(priv, otherPub, encKey, chanPub, peerPub) {
  const shared = x25519.getSharedSecret(priv, otherPub);
  return hkdf(sha256, concatBytes(shared, encKey), concatBytes(chanPub, peerPub), utf8ToBytes(INFO_PEER), 32);
}

/** newPeerKeys makes the viewer's ephemeral X25519 key pair. */
export function newPeerKeys() {
  const priv = randomBytes(32);
  return { priv, pub: x25519.getPublicKey(priv) };
}

/** seal encrypts a JSON value into an Envelope { v: 1, n, c }; nonce is for test vectors only. */
export function seal(key, value, nonce = randomBytes(24)) {
  const plain = utf8ToBytes(JSON.stringify(value));
  const c = xchacha20poly1305(key, nonce).encrypt(plain);
  return { v: 1, n: b64u(nonce), c: b64u(c) };
}

/** openRaw checks an Envelope's shape and returns its plaintext bytes; a wrong key or a
 * tampered envelope is an error. */
export function openRaw(key, env) {
  if (env === null || typeof env !== 'object' || env.v !== 1) throw new Error('envelope: not { v: 1, n, c }');
  const n = unb64u(env.n, 'envelope.n');
  if (n.length !== 24) throw new Error(`envelope.n: ${n.length} bytes, want 24`);
  const c = unb64u(env.c, 'envelope.c');
  if (c.length < 16) throw new Error('envelope.c: shorter than the tag');
  try {
    return xchacha20poly1305(key, n).decrypt(c);
  } catch {
    throw new Error('envelope: authentication failed');
  }
}

/** open opens an Envelope and parses its JSON plaintext. */
export function open(key, env) {
  return JSON.parse(utf8.decode(openRaw(key, env)));
}
