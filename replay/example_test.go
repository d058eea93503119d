package replay_test

import (
	"fmt"

	"github.com/pkuinfo/harness/lang/expr"
	"github.com/pkuinfo/harness/replay"
)

func ExampleDiff() {
	got, _ := expr.FromJSON([]byte(`{"rooms":[{"room":"101","seats":40},{"room":"102","seats":"50"}]}`))
	want, _ := expr.FromJSON([]byte(`{"rooms":[{"room":"101","seats":50},{"room":"102","seats":50}],"day":"today"}`))
	for _, line := range replay.Diff(got, want) {
		fmt.Println(line)
	}
	// Output:
	// $.rooms[0].seats: got 40, want 50
	// $.rooms[1].seats: got "50" (string), want 50 (number)
	// $.day: missing, want "today"
}

func ExampleDecode() {
	good := []byte(`name: today
tool: free
now: 2030-03-04T10:00:00+08:00
responses:
  - match: retrClassRoomFree.do
    body: { success: true, rows: [] }
expect: { rooms: [] }
`)
	cases, err := replay.Decode(nil, "tests/free.yaml", "free.yaml", good)
	if err != nil {
		panic(err)
	}
	c := cases[0]
	fmt.Println(c.Title(), c.Tool, c.Now.UTC(), len(c.Responses), replay.Show(c.Expect))

	bad := append(good, "---\ntool: free\nexpectErrors: typo\n"...)
	_, err = replay.Decode(nil, "tests/free.yaml", "plugins/classrooms/tests/free.yaml", bad)
	fmt.Println(err)
	// Output:
	// today free 2030-03-04 02:00:00 +0000 UTC 1 {"rooms":[]}
	// plugins/classrooms/tests/free.yaml:9:1: test: missing key "expect" or "expectError"
	// plugins/classrooms/tests/free.yaml:10:1: test: unknown key "expectErrors" (known: name, tool, input, now, kv, responses, abilities, expect, expectError, expectRequests)
}
