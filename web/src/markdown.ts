// Markdown through marked, then DOMPurify with an allow-list: no raw HTML
// survives (marked's html tokens are dropped), no images, links only to
// https and opened outside the app (docs/GENUI.md "What the host guarantees").
import { Marked } from 'marked';
import DOMPurify from 'dompurify';

const md = new Marked({ gfm: true, breaks: true, async: false });
md.use({ renderer: { html: () => '', image: ({ text }) => escapeHTML(text || '') } });

function escapeHTML(s: string) {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]!));
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href') || '';
    if (!/^https:\/\//i.test(href)) node.removeAttribute('href');
    else { node.setAttribute('target', '_blank'); node.setAttribute('rel', 'noopener noreferrer nofollow'); }
  }
});

const allowed = {
  ALLOWED_TAGS: ['p', 'br', 'strong', 'em', 'del', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'a', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'input'],
  ALLOWED_ATTR: ['href', 'target', 'rel', 'type', 'checked', 'disabled', 'align'],
};

// A streamed answer re-renders every message on each token; the cache keeps
// that to one parse of the message that changed.
const cache = new Map<string, string>();

export function renderMarkdown(src: string): string {
  const hit = cache.get(src);
  if (hit !== undefined) return hit;
  const html = DOMPurify.sanitize(md.parse(src) as string, allowed) as unknown as string;
  if (cache.size > 200) cache.clear();
  cache.set(src, html);
  return html;
}
