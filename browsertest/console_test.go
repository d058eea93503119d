package browsertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// console collects what a tab logs: console calls, log entries (CSP violations arrive as
// these) and uncaught exceptions, one line each.
type console struct {
	mu    sync.Mutex
	lines []string
}

// watch starts collecting the tab's console; call it before navigating.
func watch(t *testing.T, ctx context.Context) *console {
	t.Helper()
	c := &console{}
	if err := chromedp.Listen(ctx, func(ev any) {
		var line string
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range e.Args {
				if a.Value != nil {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			line = fmt.Sprintf("console.%s %s", e.Type, strings.Join(parts, " "))
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			line = fmt.Sprintf("exceptionThrown %s at %s:%d:%d", d.Text, d.URL, d.LineNumber+1, d.ColumnNumber+1)
			if d.Exception != nil {
				line += " " + d.Exception.Description
			}
		case *log.EventEntryAdded:
			line = fmt.Sprintf("log.%s %s %s", e.Entry.Level, e.Entry.Text, e.Entry.URL)
		default:
			return
		}
		c.mu.Lock()
		c.lines = append(c.lines, line)
		c.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	return c
}

// String is every line so far.
func (c *console) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}

// problems is the lines that report a CSP violation or an uncaught exception.
func (c *console) problems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, l := range c.lines {
		if strings.Contains(l, "Content Security Policy") || strings.HasPrefix(l, "exceptionThrown") {
			out = append(out, l)
		}
	}
	return out
}
