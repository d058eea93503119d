// checkInput checks a form's tool arguments against the tool's input schema
// (the plain JSON Schema GET /v1/tools gives: type, required, enum,
// minLength/maxLength, pattern, minimum/maximum, additionalProperties) before a
// Button runs the tool, so the person sees which field is wrong. The host
// checks the input again on the call; this is for the person, not a guard.
import { get } from './api';
import { t } from './i18n';

let tools: Promise<Record<string, any>> | null = null;
export function toolSchema(name: string): Promise<any | null> {
  if (!tools) tools = get('/v1/tools').then((r) => Object.fromEntries((r.tools || []).map((x: any) => [x.name, x.inputSchema]))).catch(() => { tools = null; return {}; });
  return tools.then((m) => m[name.replace('.', '__')] ?? null);
}

function typeOf(v: any): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

// checkInput returns one message per problem, each naming the field.
export function checkInput(schema: any, input: Record<string, any>): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const out: string[] = [];
  const props = schema.properties || {};
  for (const k of schema.required || []) {
    const v = input[k];
    if (v === undefined || v === null || v === '') out.push(t('form.required', { field: props[k]?.title || k }));
  }
  for (const [k, v] of Object.entries(input)) {
    const p = props[k];
    if (!p) { if (schema.additionalProperties === false) out.push(t('form.unknown', { field: k })); continue; }
    if (v === undefined || v === null || v === '') continue;
    const name = p.title || k;
    const want = Array.isArray(p.type) ? p.type : p.type ? [p.type] : [];
    const got = typeOf(v);
    if (want.length && !want.includes(got) && !(got === 'integer' && want.includes('number'))) { out.push(t('form.type', { field: name, type: t((('type.' + (want[0] || 'string')) as any)) })); continue; }
    if (p.enum && !p.enum.includes(v)) out.push(t('form.enum', { field: name, values: p.enum.join(', ') }));
    if (typeof v === 'string') {
      if (p.minLength !== undefined && [...v].length < p.minLength) out.push(t('form.short', { field: name, n: p.minLength }));
      if (p.maxLength !== undefined && [...v].length > p.maxLength) out.push(t('form.long', { field: name, n: p.maxLength }));
      // pattern is RE2 searched anywhere in the text (the host's test()); one JavaScript cannot
      // compile is left to the host.
      if (typeof p.pattern === 'string') { let re: RegExp | null = null; try { re = new RegExp(p.pattern, 'u'); } catch { re = null; } if (re && !re.test(v)) out.push(t('form.pattern', { field: name })); }
    }
    if (typeof v === 'number') {
      if (p.minimum !== undefined && v < p.minimum) out.push(t('form.min', { field: name, n: p.minimum }));
      if (p.maximum !== undefined && v > p.maximum) out.push(t('form.max', { field: name, n: p.maximum }));
    }
  }
  return out;
}
