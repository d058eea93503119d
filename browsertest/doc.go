// Package browsertest drives the web app (package web) and the Cloud viewer page in real headless
// Chromium with github.com/chromedp/chromedp, against a real `harness serve` built from this
// repository, the mock model (`harness model mock`) and a plugin served on a loopback link.
//
// It is its own module so that chromedp and cdproto stay out of the main go.mod; run it with
// `cd browsertest && go test ./...` (CI does, after installing chromium). Screenshots of every
// scenario at phone (390×844) and desktop (1280×800) size go to $BROWSERTEST_OUT (default
// $TMPDIR/harness-browsertest); the speed figures docs/PERFORMANCE.md records are logged with -v.
package browsertest
