// Same-origin calls to the host API. Every request that changes state sends
// Content-Type: application/json (the API's cross-site guard needs it); the
// token of `harness serve --token`, when the person entered one, goes in
// Authorization.
export class APIError extends Error {
  constructor(public status: number, public code: string, message: string, public body: any) { super(message); }
}

const tokenKey = 'harness.token';
export function token(): string { return localStorage.getItem(tokenKey) || ''; }
export function setToken(t: string) { if (t) localStorage.setItem(tokenKey, t); else localStorage.removeItem(tokenKey); }

function headers(body: boolean): Record<string, string> {
  const h: Record<string, string> = { Accept: 'application/json' };
  if (body) h['Content-Type'] = 'application/json';
  const t = token();
  if (t) h.Authorization = 'Bearer ' + t;
  return h;
}

export async function api<T = any>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const send = method !== 'GET';
  const res = await fetch(path, { method, headers: headers(send), body: send ? JSON.stringify(body ?? {}) : undefined, credentials: 'same-origin', signal });
  const text = await res.text();
  let data: any = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { message: text }; }
  // The host's errors are { error: { code, message, … } } (docs/HOST-API.md).
  const e = data?.error && typeof data.error === 'object' ? data.error : data;
  if (!res.ok) throw new APIError(res.status, e?.code || 'http_' + res.status, e?.message || res.statusText, e);
  return data as T;
}

export const get = <T = any>(p: string) => api<T>('GET', p);
export const post = <T = any>(p: string, b?: unknown) => api<T>('POST', p, b);
export const put = <T = any>(p: string, b?: unknown) => api<T>('PUT', p, b);
export const del = <T = any>(p: string) => api<T>('DELETE', p, {});

// callTool runs a tool as the user (a person's tap on a plugin's own page or widget) or, for a
// button the assistant drew (ui__render), as the assistant, so that the host's rules for the
// assistant apply (ask modes ask, userOnly is refused): { status: "ok", result } or
// { status: "confirm", confirmation }.
// drawn is the handle of the document the assistant drew whose button this is: the host then
// decides the call as the assistant's, under the turn that drew it.
export const callTool = (name: string, input: unknown, actor: 'user' | 'agent' = 'user', drawn?: string) =>
  post<{ status: string; result?: any; confirmation?: any; untrusted?: boolean }>(`/v1/tools/${encodeURIComponent(name)}/call`, drawn ? { actor, input, drawn } : { actor, input });

export interface SSEEvent { type: string; [k: string]: any }

// stream POSTs a JSON body and reads the Server-Sent Events answer with
// fetch and a ReadableStream (EventSource cannot POST), calling onEvent
// for each event as soon as its blank line arrives, with the time
// (performance.now) its chunk reached the page.
export async function stream(path: string, body: unknown, onEvent: (e: SSEEvent, at: number) => void, signal?: AbortSignal): Promise<void> {
  const h = headers(true);
  h.Accept = 'text/event-stream';
  const res = await fetch(path, { method: 'POST', headers: h, body: JSON.stringify(body), signal });
  if (!res.ok || !res.body) {
    let data: any = {};
    try { data = await res.json(); } catch {}
    throw new APIError(res.status, data.code || 'http_' + res.status, data.message || res.statusText, data);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const at = performance.now(); // when this chunk's events reached the page
    buf += value;
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('data:')) data += (data ? '\n' : '') + line.slice(5).trimStart();
      }
      if (data) {
        let ev: SSEEvent | undefined;
        try { ev = JSON.parse(data); } catch { /* a line that is not JSON is skipped */ }
        if (ev) onEvent(ev, at);
      }
    }
  }
}
