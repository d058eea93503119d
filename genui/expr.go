package genui

import (
	"errors"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/stdlib"
)

// env parses and checks templates with the plugin expression language and its standard
// library (docs/DECISIONS.md §2, §3, §5). An Env is safe for concurrent use and caches by source.
var env = stdlib.NewEnv()

func init() {
	checkExpr = func(src string, inScope func(string) bool) []templateIssue {
		t, err := env.ParseTemplate(src)
		if err != nil {
			return exprIssues(err)
		}
		return exprIssues(t.Check(inScope).Err())
	}
}

// exprIssues converts an expr.ErrorList (or a single error) to issues at template offsets.
func exprIssues(err error) []templateIssue {
	if err == nil {
		return nil
	}
	var list expr.ErrorList
	if errors.As(err, &list) {
		out := make([]templateIssue, 0, len(list))
		for _, e := range list {
			out = append(out, templateIssue{off: e.Pos.Offset, msg: e.Msg})
		}
		return out
	}
	var one *expr.Error
	if errors.As(err, &one) {
		return []templateIssue{{off: one.Pos.Offset, msg: one.Msg}}
	}
	return []templateIssue{{off: 0, msg: err.Error()}}
}
