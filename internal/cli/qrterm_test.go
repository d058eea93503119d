package cli

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"
)

// The terminal drawing samples every module of the QR image right, at several scales and with a
// margin, and refuses images without a code.
func TestQRModules(t *testing.T) {
	code, err := qr.Encode("https://iaaa.pku.edu.cn/qr/0123456789abcdef", qr.M, qr.Auto)
	if err != nil {
		t.Fatal(err)
	}
	n := code.Bounds().Dx()
	for _, scale := range []int{1, 3, 4, 7} {
		img, _ := barcode.Scale(code, n*scale, n*scale)
		var buf bytes.Buffer
		png.Encode(&buf, img)
		mods, err := qrModules(buf.Bytes())
		if err != nil {
			t.Fatalf("scale %d: %v", scale, err)
		}
		if len(mods) != n {
			t.Fatalf("scale %d: %d modules, want %d", scale, len(mods), n)
		}
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				r, _, _, _ := code.At(x, y).RGBA()
				if mods[y][x] != (r < 0x8000) {
					t.Fatalf("scale %d: module (%d,%d) wrong", scale, x, y)
				}
			}
		}
		var out strings.Builder
		if err := printQR(&out, buf.Bytes()); err != nil || strings.Count(out.String(), "\n") != n+2 {
			t.Fatalf("scale %d: %d lines, %v", scale, strings.Count(out.String(), "\n"), err)
		}
	}
	if _, err := qrModules([]byte("not an image")); err == nil {
		t.Error("text accepted as an image")
	}
}

// FuzzQRModules: any bytes give modules or an error, never a panic.
func FuzzQRModules(f *testing.F) {
	code, _ := qr.Encode("x", qr.L, qr.Auto)
	var buf bytes.Buffer
	png.Encode(&buf, code)
	f.Add(buf.Bytes())
	f.Add([]byte{0x89, 'P', 'N', 'G'})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		qrModules(b)
	})
}
