package genui

import (
	"net/url"
	"regexp"
	"strings"
)

var (
	// mdLink is an inline Markdown link or image: [text](url "title").
	mdLink = regexp.MustCompile(`\[([^\[\]]*)\]\(\s*<?((?:[^()\s<>]|\([^()\s<>]*\))*)>?(?:\s+[^()]*)?\)`)
	// bareURL is a URL written out (an autolink, or one GFM links by itself).
	bareURL = regexp.MustCompile(`(?i)<?\b(?:https?|ftp|mailto|javascript|data):[^\s<>()\[\]"'` + "`" + `]*>?`)
	// wwwURL is a www. address GFM links without a scheme.
	wwwURL = regexp.MustCompile(`(?i)\bwww\.[^\s<>()\[\]"'` + "`" + `]+`)
)

// InertLinks returns Markdown text md with every link keep refuses made inert:
// an inline link [text](url) becomes "text (host)", a URL written out (with
// a scheme, in angle brackets, or a www. address) becomes its host, so that a
// tap cannot carry what the URL's path and query hold to that host. keep gets
// the URL as written. Text without links is returned unchanged.
func InertLinks(md string, keep func(u string) bool) string {
	// A link inside a link's text is one more pass: each pass removes one level.
	for range maxNesting {
		next := inertOnce(md, keep)
		if next == md {
			return md
		}
		md = next
	}
	// Deeper nesting than anyone writes: break every remaining inline link.
	return inertOnce(strings.ReplaceAll(md, "](", "] ("), keep)
}

// maxNesting is how many levels of links inside link text InertLinks undoes
// one by one.
const maxNesting = 4

// inertOnce is one pass of InertLinks.
func inertOnce(md string, keep func(u string) bool) string {
	if !strings.ContainsAny(md, ":[.") {
		return md
	}
	kept := map[string]bool{}
	md = mdLink.ReplaceAllStringFunc(md, func(m string) string {
		sub := mdLink.FindStringSubmatch(m)
		if keep(sub[2]) {
			kept[sub[2]] = true
			return m
		}
		text := strings.TrimSpace(sub[1])
		if h := hostOf(sub[2]); h != "" {
			if text == "" {
				return h
			}
			return text + " (" + h + ")"
		}
		return text
	})
	md = bareURL.ReplaceAllStringFunc(md, func(m string) string {
		u := strings.TrimSuffix(strings.TrimPrefix(m, "<"), ">")
		if kept[u] || keep(u) {
			return m
		}
		return hostOf(u)
	})
	return wwwURL.ReplaceAllStringFunc(md, func(m string) string {
		if keep("https://" + m) {
			return m
		}
		return hostOf("https://" + m)
	})
}

// hostOf is the host of URL u without "www.", or "" when it has none.
func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Hostname() == "" {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(p.Hostname()), "www.")
}

// LinkSafeCut returns how much of s, Markdown text still being written (a
// stream of a reply), can be passed through InertLinks now: s up to the
// start of a link or URL that may not be complete yet, at most held bytes
// back (a longer tail is released as it is).
func LinkSafeCut(s string, held int) int {
	cut := len(s)
	if i := strings.LastIndexByte(s, '['); i >= 0 && !linkDone(s[i:]) {
		cut = i
	}
	if i := lastURLStart(s); i >= 0 && i < cut && !strings.ContainsAny(s[i:], " \t\n\r") {
		cut = i
	}
	if len(s)-cut > held {
		return len(s)
	}
	return cut
}

// linkDone reports whether s, which starts with '[', is a complete inline
// link, or text that can no longer become one.
func linkDone(s string) bool {
	j := strings.IndexByte(s, ']')
	switch {
	case j < 0:
		return false
	case j+1 == len(s):
		return false // "(" may follow
	case s[j+1] != '(':
		return true
	}
	return strings.IndexByte(s[j+1:], ')') >= 0
}

// lastURLStart is where the last URL-looking run of s starts ("http", "www.",
// or a partial prefix of one at the very end), or -1.
func lastURLStart(s string) int {
	low := strings.ToLower(s)
	i := max(strings.LastIndex(low, "http"), strings.LastIndex(low, "www."), strings.LastIndex(low, "mailto:"))
	for _, p := range []string{"htt", "ht", "h", "ww", "w"} {
		if strings.HasSuffix(low, p) && len(s)-len(p) > i {
			i = len(s) - len(p)
			break
		}
	}
	return i
}
