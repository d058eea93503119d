package cli

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // IAAA's QR image may be a GIF
	_ "image/jpeg" // or a JPEG
	_ "image/png"  // or a PNG
	"io"
	"strings"
)

// printQR draws the QR code of an image (as IAAA's genQRCode.do sends it)
// in the terminal: it finds the code's dark bounding box, takes the module
// size from the top-left finder pattern (7 modules wide), samples the centre
// of each module and prints two characters per module, with a quiet zone.
// Errors: an image it cannot decode or in which it finds no QR code.
func printQR(w io.Writer, data []byte) error {
	mods, err := qrModules(data)
	if err != nil {
		return err
	}
	var b strings.Builder
	quiet := strings.Repeat("  ", len(mods)+4)
	b.WriteString("\x1b[47m" + quiet + "\x1b[0m\n")
	for _, row := range mods {
		b.WriteString("\x1b[47m    ")
		for _, dark := range row {
			if dark {
				b.WriteString("\x1b[40m  \x1b[47m")
			} else {
				b.WriteString("  ")
			}
		}
		b.WriteString("    \x1b[0m\n")
	}
	b.WriteString("\x1b[47m" + quiet + "\x1b[0m\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// qrModules returns the QR code's modules, true for dark.
func qrModules(data []byte) ([][]bool, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode the QR image: %w", err)
	}
	if cfg.Width > 4096 || cfg.Height > 4096 {
		return nil, fmt.Errorf("the QR image is %d×%d pixels, over 4096", cfg.Width, cfg.Height)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode the QR image: %w", err)
	}
	bd := img.Bounds()
	dark := func(x, y int) bool {
		r, g, b, _ := img.At(x, y).RGBA()
		return (r+g+b)/3 < 0x8000
	}
	minX, minY, maxX, maxY := bd.Max.X, bd.Max.Y, bd.Min.X-1, bd.Min.Y-1
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			if dark(x, y) {
				minX, minY = min(minX, x), min(minY, y)
				maxX, maxY = max(maxX, x), max(maxY, y)
			}
		}
	}
	if maxX < minX {
		return nil, errors.New("no QR code in the image")
	}
	run := 0
	for x := minX; x <= maxX && dark(x, minY); x++ {
		run++
	}
	size := float64(run) / 7
	n := int(float64(maxX-minX+1)/size + 0.5)
	if size < 1 || n < 21 || n > 177 {
		return nil, errors.New("no QR code in the image")
	}
	mods := make([][]bool, n)
	for j := range mods {
		mods[j] = make([]bool, n)
		for i := range mods[j] {
			x := minX + int((float64(i)+0.5)*size)
			y := minY + int((float64(j)+0.5)*size)
			mods[j][i] = dark(x, y)
		}
	}
	return mods, nil
}
