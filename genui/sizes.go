package genui

import "encoding/json"

// DeclaredSizes returns the dashboard sizes a widget document declares (its "sizes", in written
// order, each one of Sizes), or ["md"] when it declares none, as docs/GENUI.md gives the
// default. A document that is not JSON, or whose sizes are not a list of known sizes, also
// yields ["md"]: Validate reports such a document, and the dashboard then offers the default
// size only.
func DeclaredSizes(doc []byte) []string {
	var d struct {
		Sizes []string `json:"sizes"`
	}
	if json.Unmarshal(doc, &d) != nil || len(d.Sizes) == 0 {
		return []string{"md"}
	}
	out := make([]string, 0, len(d.Sizes))
	for _, s := range d.Sizes {
		if !contains(Sizes, s) {
			return []string{"md"}
		}
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// DefaultSize is the size a new card of a widget with the declared sizes gets: md when it
// declares md, else the first it declares.
func DefaultSize(declared []string) string {
	if len(declared) == 0 || contains(declared, "md") {
		return "md"
	}
	return declared[0]
}
