package interp_test

import (
	"context"
	"testing"

	"github.com/pkuinfo/harness/interp"
)

func TestInputValidation(t *testing.T) {
	p := loadPlugin(t, map[string]string{"main": `
title: Main
description: main tool
effect: read
input:
  building: { type: string, optional: true, trim: true, min: 1, max: 4 }
  day: { enum: [today, tomorrow], default: today }
  n: { type: integer, min: 1, max: 12, default: 1 }
  ratio: { type: number, optional: true }
  code: { type: string, pattern: '^\d{6}$', optional: true }
  rooms: { type: array, optional: true, max: 3, items: { type: string, trim: true } }
  opts: { type: object, optional: true }
  flag: { type: boolean, default: false }
return: input
`})
	tests := []struct {
		name, in, want string
	}{
		{"defaults", `{}`, `{"building":null,"day":"today","n":1,"ratio":null,"code":null,"rooms":null,"opts":null,"flag":false}`},
		{"null input", ``, `{"building":null,"day":"today","n":1,"ratio":null,"code":null,"rooms":null,"opts":null,"flag":false}`},
		{"all given, trimmed, reordered", `{"flag":true,"rooms":[" 101 ","102"],"building":" 二教 ","n":12,"ratio":0.5,"code":"123456","opts":{"a":1},"day":"tomorrow"}`,
			`{"building":"二教","day":"tomorrow","n":12,"ratio":0.5,"code":"123456","rooms":["101","102"],"opts":{"a":1},"flag":true}`},
		{"null is absent", `{"n":null}`, `{"building":null,"day":"today","n":1,"ratio":null,"code":null,"rooms":null,"opts":null,"flag":false}`},
		{"not an object", `[1]`, `error input: tools/main.yaml:6:3: input: must be an object (got list)`},
		{"unknown field", `{"bulding":"二教"}`, `error input: tools/main.yaml:6:3: input.bulding: unknown field (the tool takes building, day, n, ratio, code, rooms, opts, flag)`},
		{"wrong type", `{"n":"3"}`, `error input: tools/main.yaml:8:3: input.n: must be an integer (got string)`},
		{"not an integer", `{"n":2.5}`, `error input: tools/main.yaml:8:3: input.n: must be an integer (got 2.5)`},
		{"below min", `{"n":0}`, `error input: tools/main.yaml:8:3: input.n: must be at least 1 (got 0)`},
		{"above max", `{"n":13}`, `error input: tools/main.yaml:8:3: input.n: must be at most 12 (got 13)`},
		{"enum", `{"day":"Today"}`, `error input: tools/main.yaml:7:3: input.day: must be one of "today", "tomorrow" (got "Today")`},
		{"string too long", `{"building":"一二三四五"}`, `error input: tools/main.yaml:6:3: input.building: must be at most 4 characters (got 5)`},
		{"trimmed to empty", `{"building":"   "}`, `error input: tools/main.yaml:6:3: input.building: must be at least 1 characters (got 0)`},
		{"pattern", `{"code":"12345a"}`, `error input: tools/main.yaml:10:3: input.code: must match ^\d{6}$ (got "12345a")`},
		{"list too long", `{"rooms":["a","b","c","d"]}`, `error input: tools/main.yaml:11:3: input.rooms: must be at most 3 items (got 4)`},
		{"list item type", `{"rooms":["a",2]}`, `error input: tools/main.yaml:11:49: input.rooms[1]: must be a string (got number)`},
		{"object", `{"opts":"x"}`, `error input: tools/main.yaml:12:3: input.opts: must be an object (got string)`},
		{"boolean", `{"flag":"yes"}`, `error input: tools/main.yaml:13:3: input.flag: must be a boolean (got string)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := interp.Run(context.Background(), p, "main", fromJSON(t, tc.in), interp.Options{})
			got := ""
			if err != nil {
				got = "error " + err.(*interp.Error).Kind + ": " + err.Error()
			} else {
				got = toJSON(t, v)
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
