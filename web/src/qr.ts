// Reading the QR code in an image the person picked or dropped: the image is decoded by the
// browser (createImageBitmap), drawn on a canvas, and its pixels given to jsQR, which is loaded
// only here (a chunk of its own, so it costs nothing until someone opens an image).
import type { Key } from './i18n';

// QRError is a problem with the image, as a string key of the app and its values.
export class QRError extends Error {
  constructor(public key: Key, public vars?: Record<string, string | number>) { super(key); }
}

// MaxImageBytes is the largest image read (a photo of a screen is a few MB).
export const MaxImageBytes = 20 << 20;
// MaxSide is the longest side the image is scaled down to before decoding.
const MaxSide = 1600;

// decodeQRFile returns the text of the QR code in f, or throws a QRError saying why not: not
// an image, too large, unreadable, or no QR code found.
export async function decodeQRFile(f: File): Promise<string> {
  if (f.type && !f.type.startsWith('image/')) throw new QRError('qr.notImage', { name: f.name });
  if (f.size > MaxImageBytes) throw new QRError('qr.tooLarge', { mb: MaxImageBytes >> 20 });
  let bmp: ImageBitmap;
  try { bmp = await createImageBitmap(f); } catch { throw new QRError('qr.notImage', { name: f.name }); }
  const scale = Math.min(1, MaxSide / Math.max(bmp.width, bmp.height));
  const w = Math.max(1, Math.round(bmp.width * scale)), h = Math.max(1, Math.round(bmp.height * scale));
  const canvas = document.createElement('canvas');
  canvas.width = w; canvas.height = h;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  if (!ctx) throw new QRError('qr.notImage', { name: f.name });
  // A transparent PNG's clear pixels would read as black: draw on white.
  ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, w, h);
  ctx.drawImage(bmp, 0, 0, w, h);
  bmp.close();
  const px = ctx.getImageData(0, 0, w, h);
  const { default: jsQR } = await import('jsqr');
  const code = jsQR(px.data, w, h, { inversionAttempts: 'attemptBoth' });
  if (!code || !code.data) throw new QRError('qr.none');
  return code.data;
}

// linkFromQR takes the install link out of a QR code's text: an http(s) link as it is, or the
// link= of this app's own /install?link=… page (which a shared install QR may hold). Other text
// is a QRError that quotes it.
export function linkFromQR(text: string): string {
  const s = text.trim();
  let u: URL;
  try { u = new URL(s); } catch { throw new QRError('qr.notLink', { text: s.length > 80 ? s.slice(0, 80) + '…' : s }); }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new QRError('qr.notLink', { text: s.length > 80 ? s.slice(0, 80) + '…' : s });
  if (u.pathname === '/install' && u.searchParams.get('link')) return linkFromQR(u.searchParams.get('link')!);
  return u.toString();
}
