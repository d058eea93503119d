package host

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/pkuinfo/harness/interp"
	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/plugin"
)

// DraftSource is the source of a plugin written in a conversation
// ("draft:" and its content hash): a Community plugin that exists only in
// memory until the person installs it from its review sheet.
const DraftSource = "draft:"

// LoadDraft loads an in-memory draft folder (path → content) through the
// loader and validator every plugin goes through (seed 003
// "plugins.validate"). A draft that does not validate is *Invalid with
// its diagnostics (file, line, column, step); a draft without PLUGIN.md or
// over the size limits is *Unreadable.
func LoadDraft(ctx context.Context, files map[string][]byte) (*plugin.Plugin, []diag.Diagnostic, error) {
	p, diags, err := plugin.LoadFiles(ctx, files)
	if err != nil {
		return nil, diags, &Unreadable{Source: "the draft", Err: err}
	}
	if diag.HasErrors(diags) {
		return nil, diags, &Invalid{Source: "the draft", Diagnostics: errorsOnly(diags)}
	}
	return p, diags, nil
}

// ReviewDraft validates a draft and returns its review sheet, keeping the
// draft for Install(DraftSource+hash, hash) exactly as Review keeps a
// fetched plugin (seed 003 "plugins.install": the sheet the person decides
// on; a draft counts as a Community plugin). It installs nothing.
func (h *Host) ReviewDraft(ctx context.Context, files map[string][]byte) (*Review, error) {
	p, _, err := LoadDraft(ctx, files)
	if err != nil {
		return nil, err
	}
	r := &reviewed{p: p, source: DraftSource + p.Hash, at: h.now()}
	h.mu.Lock()
	if len(h.reviews) >= maxReviews {
		var oldest string
		for k, v := range h.reviews {
			if oldest == "" || v.at.Before(h.reviews[oldest].at) {
				oldest = k
			}
		}
		delete(h.reviews, oldest)
	}
	h.reviews[p.Hash] = r
	h.mu.Unlock()
	rv := reviewOf(r)
	if in, err := h.Show(ctx, rv.ID); err == nil {
		rv.Installed = in.Version
	}
	return rv, nil
}

// TryDraft runs one read tool of a draft that is not installed (seed 003
// "plugins.tryTool"): real requests, the person's campus sessions for the
// services the draft declares (the interpreter refuses the others), no
// host abilities, and a throw-away KV. A write, money or public tool is
// refused (*Refusal), as is an unknown tool (*NotFound); a failed run is
// the run's *interp.Error. The caller treats the result as untrusted.
func (h *Host) TryDraft(ctx context.Context, p *plugin.Plugin, tool string, input any) (any, error) {
	t := p.Tool(tool)
	if t == nil {
		names := make([]string, len(p.Tools))
		for i, x := range p.Tools {
			names[i] = x.Name
		}
		return nil, &NotFound{What: fmt.Sprintf("the draft has no tool %q (it has %s)", tool, strings.Join(names, ", "))}
	}
	if t.Effect != plugin.EffectRead {
		return nil, &Refusal{Actor: ActorAgent, Plugin: p.Manifest.ID, Tool: tool,
			Reason: fmt.Sprintf("%s is a %s tool; only read tools of a draft can be tried before it is installed", tool, t.Effect)}
	}
	if d := thirdPartyDiag(p.Manifest); d != nil {
		// A draft is nobody's reviewed plugin: the Community rule holds for it.
		return nil, &Refusal{Actor: ActorAgent, Plugin: p.Manifest.ID, Tool: tool, Reason: d.String()}
	}
	if input == nil {
		input = expr.NewObject(0)
	}
	opts := h.options()
	opts.Abilities = nil
	opts.KV = &draftKV{m: map[string]interp.Entry{}}
	return interp.Run(ctx, p, tool, input, opts)
}

// draftKV is the throw-away KV of a tried draft.
type draftKV struct {
	mu sync.Mutex
	m  map[string]interp.Entry
	n  int
}

func (k *draftKV) Get(_ context.Context, _, key string) (interp.Entry, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.m[key]
	return e, ok, nil
}

func (k *draftKV) Set(_ context.Context, _, key string, e interp.Entry) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	old := entrySize(k.m[key])
	if k.n-old+entrySize(e) > interp.KVQuota {
		return fmt.Errorf("kv: %w", interp.ErrQuota)
	}
	k.n += entrySize(e) - old
	k.m[key] = e
	return nil
}

func (k *draftKV) Delete(_ context.Context, _, key string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.n -= entrySize(k.m[key])
	delete(k.m, key)
	return nil
}

// entrySize is an entry's size as its key's JSON text, in bytes.
func entrySize(e interp.Entry) int {
	if e.Value == nil {
		return 0
	}
	b, err := expr.ToJSON(e.Value, "")
	if err != nil {
		return interp.KVQuota + 1
	}
	return len(b)
}
