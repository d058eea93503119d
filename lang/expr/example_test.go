package expr_test

import (
	"context"
	"fmt"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/lang/stdlib"
)

// Parse, check and evaluate the seed's quickstart return expression.
func ExampleExpr_Eval() {
	env := stdlib.NewEnv()
	x, err := env.Parse("page.rows.map(r => ({ room: r.room, seats: num(r.cap, 0) }))")
	if err != nil {
		panic(err)
	}
	if errs := x.Check(func(name string) bool { return name == "page" }); len(errs) > 0 {
		panic(errs)
	}
	page, _ := expr.FromJSON([]byte(`{"rows": [{"room": "二教101", "cap": "120人"}, {"room": "二教102", "cap": null}]}`))
	v, err := x.Eval(context.Background(), expr.MapVars{"page": page}, expr.NewBudget(expr.DefaultBudget))
	if err != nil {
		panic(err)
	}
	out, _ := expr.ToJSON(v, "")
	fmt.Println(string(out))
	// Output: [{"room":"二教101","seats":120},{"room":"二教102","seats":0}]
}

// A template that is one ${…} keeps the value's type; others build text.
func ExampleTemplate_Render() {
	env := stdlib.NewEnv()
	vars := expr.MapVars{"pageIndex": 1.0, "input": nil}
	for _, src := range []string{"${pageIndex + 1}", "page ${pageIndex + 1} of ${input ?? '?'}", "$${literal}"} {
		t, _ := env.ParseTemplate(src)
		v, _ := t.Render(context.Background(), vars, nil)
		fmt.Printf("%s → %#v\n", src, v)
	}
	// Output:
	// ${pageIndex + 1} → 2
	// page ${pageIndex + 1} of ${input ?? '?'} → "page 2 of ?"
	// $${literal} → "${literal}"
}

// Errors carry line:column positions; Format adds the line and a caret for people.
func ExampleFormat() {
	env := stdlib.NewEnv()
	src := "page.data.rows.length"
	x, _ := env.Parse(src)
	_, err := x.Eval(context.Background(), expr.MapVars{"page": expr.NewObject(0)}, nil)
	fmt.Println(expr.Format(src, err))
	// Output:
	// 1:11: cannot read property 'rows' of null (use ?.)
	//     page.data.rows.length
	//               ^
}
