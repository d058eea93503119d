package genui

// ActionTools declares every tool the buttons of a decoded document name (an `action` object
// with a `tool` string, anywhere in doc), each as a write tool taking the argument names the
// action passes, so that Validate checks an inline document's shape without a plugin's tool
// list. doc is JSON decoded into map[string]any and []any. Whether a tap may run is decided by
// Host.Call when it happens.
func ActionTools(doc any) map[string]Tool {
	out := map[string]Tool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if a, ok := x["action"].(map[string]any); ok {
				if name, ok := a["tool"].(string); ok {
					t := Tool{Effect: "write"}
					if args, ok := a["args"].(map[string]any); ok {
						for k := range args {
							t.Input = append(t.Input, k)
						}
					}
					out[name] = t
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc)
	return out
}
