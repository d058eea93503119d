// Settings → AI provider: a preset, the base URL, the model and the API key, saved with
// PUT /v1/model (the host seals the key; no route gives it back, only whether one is set and
// its last four characters), and "test connection" (POST /v1/model/test: a real request to the
// service, with what the form says, before or after saving). The running host uses a saved
// choice from the assistant's next answer on.
import { useEffect, useState } from 'preact/hooks';
import { get, put, post } from './api';
import { t, locale } from './i18n';
import { say, errText } from './app';
import { Skeleton } from './genui';

interface Preset { name: string; title: string; titleZh?: string; baseURL: string; model: string; keyURL?: string }
// presetTitle is a preset's title in the page's language (the host sends English and zh-Hans).
const presetTitle = (x: Preset) => (locale.value === 'en' ? x.title : x.titleZh || x.title);

export function AIProvider() {
  const [cur, setCur] = useState<any>(null);
  const [presets, setPresets] = useState<Preset[]>([]);
  const [preset, setPreset] = useState('');
  const [url, setUrl] = useState('');
  const [model, setModel] = useState('');
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const [problem, setProblem] = useState<{ field?: string; text: string } | null>(null);
  const show = (v: any) => { setCur(v); setPreset(v.preset || (v.baseURL ? '' : 'deepseek')); setUrl(v.baseURL || ''); setModel(v.model || ''); };
  useEffect(() => {
    get('/v1/model/presets').then((r) => {
      setPresets(r.presets || []);
      get('/v1/model').then((v) => { show(v); if (!v.baseURL && r.presets?.[0]) { setPreset(r.presets[0].name); setUrl(r.presets[0].baseURL); setModel(r.presets[0].model); } }).catch((e) => setProblem({ text: errText(e) }));
    }).catch((e) => setProblem({ text: errText(e) }));
  }, []);
  if (!cur) return problem ? <p class="state error" role="alert">{problem.text}</p> : <Skeleton rows={3} />;
  const p = presets.find((x) => x.name === preset);
  const choose = (name: string) => {
    setPreset(name); setResult(null);
    const np = presets.find((x) => x.name === name);
    if (np) { setUrl(np.baseURL); setModel(np.model); }
  };
  const body = (withKey: boolean) => ({ baseURL: url.trim(), model: model.trim(), ...(withKey && key.trim() ? { apiKey: key.trim() } : {}) });
  const fail = (e: any) => setProblem({ field: e?.body?.field, text: e?.code === 'env_key' ? t('ai.envKey') : errText(e) });
  const save = async () => {
    setBusy(true); setProblem(null); setResult(null);
    try {
      const v = await put('/v1/model', body(true));
      show(v); setKey('');
      say(v.keyDropped ? t('ai.savedKeyDropped') : t('ai.saved'));
    } catch (e) { fail(e); } finally { setBusy(false); }
  };
  const remove = async () => {
    setBusy(true); setProblem(null);
    try { show(await put('/v1/model', { apiKey: '' })); say(t('ai.keyRemoved')); } catch (e) { fail(e); } finally { setBusy(false); }
  };
  const test = async () => {
    setBusy(true); setProblem(null); setResult(null);
    try {
      const r = await post('/v1/model/test', body(true));
      if (!r.ok) setResult({ ok: false, text: t('ai.testFailed', { error: r.error }) });
      else setResult({ ok: true, text: t(r.modelListed === false ? 'ai.testOkUnlisted' : 'ai.testOk', { provider: r.provider, ms: r.ms, model: r.model }) });
    } catch (e) { fail(e); } finally { setBusy(false); }
  };
  const invalid = (f: string) => (problem?.field === f ? { 'aria-invalid': true, 'aria-describedby': 'ai-problem' } : {});
  const env = cur.from?.baseURL === 'env' || cur.from?.model === 'env' || cur.key?.from === 'env';
  return (
    <form class="g-col gap-sm ai" onSubmit={(e) => { e.preventDefault(); save(); }}>
      <div id="ai-now"><p class="detail">{cur.model ? t('settings.modelIs', { model: cur.model, url: cur.baseURL }) : t('settings.modelNone')}</p>
        {cur.model ? <p class="detail">{cur.key?.set ? t('ai.keySet', { hint: cur.key.hint === 'set' ? '' : cur.key.hint }) : t('ai.keyNone')}</p> : null}</div>
      {env ? <p class="warn" role="note">{t('ai.fromEnv')}</p> : null}
      <div class="g-field"><label for="ai-preset">{t('ai.preset')}</label>
        <select id="ai-preset" value={preset} onChange={(e) => choose((e.target as HTMLSelectElement).value)}>
          {presets.map((x) => <option value={x.name}>{presetTitle(x)}</option>)}
          <option value="">{t('ai.custom')}</option>
        </select>
      </div>
      <div class="g-field"><label for="ai-url">{t('ai.baseURL')}</label><input id="ai-url" type="url" inputMode="url" required value={url} {...invalid('baseURL')} onInput={(e) => { setUrl((e.target as HTMLInputElement).value); setPreset(''); setResult(null); }} /></div>
      <div class="g-field"><label for="ai-model">{t('ai.model')}</label><input id="ai-model" required value={model} autocomplete="off" spellcheck={false} {...invalid('model')} onInput={(e) => { setModel((e.target as HTMLInputElement).value); setResult(null); }} /></div>
      <div class="g-field"><label for="ai-key">{t('ai.key')}</label>
        <input id="ai-key" type="password" autocomplete="off" spellcheck={false} value={key} aria-describedby="ai-key-hint" {...invalid('apiKey')}
          placeholder={cur.key?.set ? t('ai.keyKeep') : ''} onInput={(e) => { setKey((e.target as HTMLInputElement).value); setResult(null); }} />
        <small id="ai-key-hint" class="detail">{t('ai.keyHint')}{p?.keyURL ? <> <a href={p.keyURL} target="_blank" rel="noopener noreferrer">{t('ai.getKey', { service: presetTitle(p) })}</a></> : null}</small>
      </div>
      {problem ? <p id="ai-problem" class="state error" role="alert">{problem.text}</p> : null}
      <div class="actions wrap">
        <button type="submit" class="primary" disabled={busy || !url.trim() || !model.trim()}>{t('ai.save')}</button>
        <button type="button" id="ai-test" disabled={busy || !url.trim() || !model.trim()} onClick={test}>{t('ai.test')}</button>
        {cur.key?.set && cur.key?.from === 'stored' ? <button type="button" class="destructive" disabled={busy} onClick={remove}>{t('ai.removeKey')}</button> : null}
      </div>
      <p id="ai-result" role="status" class={result ? (result.ok ? 'ok' : 'state error') : 'detail'}>{busy ? t('ai.working') : result?.text || ''}</p>
    </form>
  );
}
