package plugin_test

import (
	"context"
	"fmt"

	"github.com/pkuinfo/harness/lang/diag"
	"github.com/pkuinfo/harness/plugin"
)

func ExampleResolveLink() {
	l, err := plugin.ResolveLink("https://github.com/pkuinfo/pku-harness-plugins/tree/main/plugins/classrooms")
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Manifest)
	fmt.Println(l.Official)
	// Output:
	// https://raw.githubusercontent.com/pkuinfo/pku-harness-plugins/main/plugins/classrooms/PLUGIN.md
	// true
}

func ExampleLoadFiles() {
	files := map[string][]byte{
		"PLUGIN.md": []byte(`---
spec: 1
id: hello
name: 你好
description: Says hello.
version: 0.1.0
author: pkuinfo
tools:
  greet: tools/greet.yaml
i18n:
  en: { name: Hello, description: Says hello., tools: { greet: { title: Greet } } }
---
Use hello__greet.
`),
		"tools/greet.yaml": []byte(`title: 打招呼
description: Greets someone by name.
effect: read
input:
  name: { type: string, max: 20 }
return: "'你好,' + nmae"
`),
	}
	p, diags, err := plugin.LoadFiles(context.Background(), files)
	if err != nil {
		panic(err)
	}
	for _, d := range diags {
		fmt.Println(d)
	}
	fmt.Println(p.Manifest.ID, len(p.Tools), diag.HasErrors(diags))
	// Output:
	// tools/greet.yaml:6:18: return: unknown name 'nmae'
	// hello 1 true
}

func ExampleEffect_AtLeast() {
	fmt.Println(plugin.EffectMoney.AtLeast(plugin.EffectWrite))
	fmt.Println(plugin.EffectMoney.AtLeast(plugin.EffectPublic))
	// Output:
	// true
	// false
}
