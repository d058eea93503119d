package plugin

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/lang/diag"
)

// bigPlugin builds a plugin of about size bytes: many tools, each with requests, each steps,
// branches, extracts and templates, so that the benchmark exercises every decoder and check.
func bigPlugin(size int) map[string][]byte {
	var tools []string
	files := map[string][]byte{}
	total := 0
	for i := 0; total < size-2000; i++ {
		name := fmt.Sprintf("tool%d", i)
		var b strings.Builder
		fmt.Fprintf(&b, "title: 工具 %d\nsummary: 第 %d 个工具\ndescription: Tool number %d of the benchmark.\neffect: read\n", i, i, i)
		b.WriteString("input:\n  building: { type: string, optional: true, trim: true, max: 20, pattern: '^[^/]+$' }\n  day: { enum: [today, tomorrow, dayAfter], default: today }\n")
		b.WriteString("constants:\n  DAYS: { today: 今天, tomorrow: 明天, dayAfter: 后天 }\nfunctions:\n  cell: \"(c) => trim(str(c))\"\nsteps:\n")
		for j := 0; j < 12; j++ {
			fmt.Fprintf(&b, `  - let: page%[1]d
    request:
      url: https://portal.pku.edu.cn/q%[1]d
      query: { b: '${input.building ?? "二教"}', t: '${DAYS[input.day]}', n: %[1]d }
      headers: { referer: 'https://portal.pku.edu.cn/' }
    as: json
  - check: "page%[1]d.success && isList(page%[1]d.rows)"
    error: 第 %[1]d 页查询未成功 ${input.day}
  - let: rows%[1]d
    each: "page%[1]d.rows"
    concurrency: 2
    value: "({ room: cell(item.room), seats: num(item.cap, 0), i: index })"
  - if: "len(rows%[1]d) > 10"
    then:
      - let: top%[1]d
        value: |
          sortBy(rows%[1]d, 'seats', 'desc')
            .slice(0, 10)
            .map(r => r.room)
    else:
      - let: top%[1]d
        value: "rows%[1]d.map(r => r.room)"
`, j)
		}
		b.WriteString("return: \"{ rooms: top0, more: top11 }\"\n")
		path := "tools/" + name + ".yaml"
		files[path] = []byte(b.String())
		total += b.Len()
		tools = append(tools, "  "+name+": "+path)
	}
	manifest := "---\nspec: 1\nid: bench\nname: 基准\ndescription: A large plugin for the benchmark.\nversion: 1.0.0\nauthor: pkuinfo\nnetwork: [portal.pku.edu.cn]\ntools:\n" +
		strings.Join(tools, "\n") + "\n---\nBenchmark.\n"
	files[ManifestFile] = []byte(manifest)
	return files
}

// BenchmarkLoadValidate loads and validates a plugin of about 500 KB (the cap is 512 KB). Goal:
// ≤ 50 ms per op.
func BenchmarkLoadValidate(b *testing.B) {
	files := bigPlugin(500 << 10)
	n := 0
	for _, f := range files {
		n += len(f)
	}
	p, ds, err := LoadFiles(context.Background(), files)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range ds {
		if d.Severity == diag.Error {
			b.Fatalf("benchmark plugin has an error: %s", d)
		}
	}
	b.SetBytes(int64(n))
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		if _, _, err := LoadFiles(context.Background(), files); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time (user+system of the whole process, GC workers included) per op: unlike ns/op, it
	// does not depend on how busy the machine's other cores are, nor on how many of them the
	// load's parallel decode gets.
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(len(p.Tools)), "tools") // after the loop: ResetTimer drops metrics
}

func TestBigPluginIsValid(t *testing.T) {
	files := bigPlugin(100 << 10)
	_, ds, err := LoadFiles(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Severity == diag.Error {
			t.Errorf("%s", d)
		}
	}
}

// BenchmarkLoadQuickstart loads and validates the seed's quickstart plugin from its folder: the
// cost of validating a typical small plugin, file reads included.
func BenchmarkLoadQuickstart(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, ds, err := LoadDir("testdata/quickstart/my-classrooms"); err != nil || len(ds) != 0 {
			b.Fatal(err, ds)
		}
	}
}

// TestPlaceNilAllocs guards the hot path of every field evaluation: placing a nil error
// allocates nothing.
func TestPlaceNilAllocs(t *testing.T) {
	sc := &Scalar{File: "t.yaml"}
	if n := testing.AllocsPerRun(100, func() { _ = sc.place(nil) }); n != 0 {
		t.Errorf("place(nil) allocates %v times, want 0", n)
	}
}
