package vault

import (
	"bytes"
	"testing"
)

// BenchmarkSealOpen seals and opens a 1 KiB session (a JWT and a few cookies).
func BenchmarkSealOpen(b *testing.B) {
	box, _ := NewBox(bytes.Repeat([]byte{1}, 32))
	plain := bytes.Repeat([]byte("x"), 1024)
	b.SetBytes(int64(len(plain)))
	b.ReportAllocs()
	for b.Loop() {
		s := box.Seal("campus_sessions/card", plain)
		if _, err := box.Open("campus_sessions/card", s); err != nil {
			b.Fatal(err)
		}
	}
}
