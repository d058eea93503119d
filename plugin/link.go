package plugin

import (
	"fmt"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"unicode"
)

// Link is an install link resolved to the URL of its PLUGIN.md (seed "Install links").
type Link struct {
	// Manifest is the absolute URL of PLUGIN.md.
	Manifest string
	// Base is the URL the plugin's relative paths resolve against; it ends with "/".
	Base string
	// Official is true for links to a plugin folder under plugins/ on the main branch of
	// github.com/pkuinfo/pku-harness-plugins (seed: "Official means bundled with the app or
	// linked from github.com/pkuinfo/pku-harness-plugins"); see isOfficial.
	Official bool
}

// rawGitHub is where GitHub serves a repository's files.
const rawGitHub = "https://raw.githubusercontent.com/"

// ResolveLink turns an install link of any form in the seed's table into the URL of its
// PLUGIN.md:
//
//	https://github.com/OWNER/REPO                         → raw …/OWNER/REPO/HEAD/PLUGIN.md
//	https://github.com/OWNER/REPO/tree/REF[/PATH]         → raw …/OWNER/REPO/REF/PATH/PLUGIN.md
//	https://github.com/OWNER/REPO/blob/REF/PATH/PLUGIN.md → raw …/OWNER/REPO/REF/PATH/PLUGIN.md
//	https://HOST/…/PLUGIN.md                              → itself
//	pkuharness://plugin?src=URL-ENCODED-LINK              → the inner link, resolved
//
// A ref containing "/" cannot be told apart from a path in a tree or blob link; the first
// segment is taken as the ref. Only https is accepted, except plain http to this machine
// (LoopbackHost) for a plugin folder served locally during development, and never inside a
// pkuharness:// link. The error says what is wrong with the link.
func ResolveLink(link string) (Link, error) {
	return resolveLink(strings.TrimSpace(link), 0)
}

func resolveLink(link string, depth int) (Link, error) {
	u, err := url.Parse(link)
	if err != nil {
		return Link{}, fmt.Errorf("link %q: %v", link, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "pkuharness":
		if depth > 0 {
			return Link{}, fmt.Errorf("link %q: a pkuharness:// link cannot wrap another", link)
		}
		if u.Host != "plugin" && u.Opaque == "" {
			return Link{}, fmt.Errorf("link %q: expected pkuharness://plugin?src=…", link)
		}
		src := u.Query().Get("src")
		if src == "" {
			return Link{}, fmt.Errorf("link %q: pkuharness://plugin needs src=<url-encoded link>", link)
		}
		return resolveLink(src, depth+1)
	case "https":
	case "http":
		// Plain http only reaches this machine, for serving a plugin folder during development
		// (python3 -m http.server); a pkuharness:// link, which comes from a web page, may not.
		if depth > 0 || !LoopbackHost(u.Hostname()) {
			return Link{}, fmt.Errorf("link %q: only https links are allowed (http only to localhost, 127.0.0.0/8 or [::1])", link)
		}
	case "":
		return Link{}, fmt.Errorf("link %q: not a URL (use https://… or pkuharness://plugin?src=…)", link)
	default:
		return Link{}, fmt.Errorf("link %q: unsupported scheme %s (use https)", link, u.Scheme)
	}
	if u.User != nil {
		return Link{}, fmt.Errorf("link %q: credentials in links are not allowed", link)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return Link{}, fmt.Errorf("link %q: no host", link)
	}
	segs := splitPath(u.Path)
	if host == "github.com" || host == "www.github.com" {
		return githubLink(link, segs)
	}
	if len(segs) == 0 || segs[len(segs)-1] != ManifestFile {
		return Link{}, fmt.Errorf("link %q: an https link must end in /%s (or be a GitHub folder, repository or file link)", link, ManifestFile)
	}
	for _, s := range segs {
		if s == ".." || s == "." {
			return Link{}, fmt.Errorf("link %q: the path may not contain %s", link, s)
		}
	}
	u.Fragment = ""
	u.RawFragment = ""
	manifest := u.String()
	base := *u
	base.RawQuery = ""
	base.Path = "/" + strings.Join(segs[:len(segs)-1], "/")
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	base.RawPath = ""
	official := host == "raw.githubusercontent.com" && len(segs) >= 3 && isOfficial(segs[0], segs[1], segs[2:len(segs)-1])
	return Link{Manifest: manifest, Base: base.String(), Official: official}, nil
}

func githubLink(link string, segs []string) (Link, error) {
	if len(segs) < 2 {
		return Link{}, fmt.Errorf("link %q: a GitHub link needs an owner and a repository", link)
	}
	owner, repo := segs[0], strings.TrimSuffix(segs[1], ".git")
	for _, s := range segs {
		if s == ".." || s == "." {
			return Link{}, fmt.Errorf("link %q: the path may not contain %s", link, s)
		}
	}
	root := rawGitHub + url.PathEscape(owner) + "/" + url.PathEscape(repo) + "/"
	escape := func(ss []string) string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = url.PathEscape(s)
		}
		return strings.Join(out, "/")
	}
	switch {
	case len(segs) == 2:
		base := root + "HEAD/"
		return Link{Manifest: base + ManifestFile, Base: base}, nil
	case segs[2] == "tree" && len(segs) >= 4:
		dir := escape(segs[3:])
		base := root + dir + "/"
		return Link{Manifest: base + ManifestFile, Base: base, Official: isOfficial(owner, repo, segs[3:])}, nil
	case segs[2] == "blob" && len(segs) >= 5:
		if segs[len(segs)-1] != ManifestFile {
			return Link{}, fmt.Errorf("link %q: a GitHub file link must point at %s", link, ManifestFile)
		}
		dir := escape(segs[3 : len(segs)-1])
		base := root + dir + "/"
		return Link{Manifest: base + ManifestFile, Base: base, Official: isOfficial(owner, repo, segs[3:len(segs)-1])}, nil
	}
	return Link{}, fmt.Errorf("link %q: unsupported GitHub link (use …/OWNER/REPO, …/tree/REF/PATH or …/blob/REF/PATH/%s)", link, ManifestFile)
}

// LoopbackHost reports whether host (a URL's Hostname, without port or brackets) is
// "localhost" or a loopback address (127.0.0.0/8, ::1): the hosts a plain http link may name.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

func isOfficialRepo(owner, repo string) bool {
	return strings.EqualFold(owner, "pkuinfo") && strings.EqualFold(repo, "pku-harness-plugins")
}

// isOfficial reports whether a folder of a GitHub repository, refPath being the ref and the
// folder's path, holds an official plugin: one merged under plugins/ on the main branch of
// pkuinfo/pku-harness-plugins (seed: "open a pull request that adds its folder under plugins/").
// Another ref is not: GitHub serves any fork's commits under the parent repository's name, so a
// commit or pull-request ref there may hold anyone's files.
func isOfficial(owner, repo string, refPath []string) bool {
	if !isOfficialRepo(owner, repo) {
		return false
	}
	switch {
	case len(refPath) >= 3 && refPath[0] == "main":
		refPath = refPath[1:]
	case len(refPath) >= 5 && refPath[0] == "refs" && refPath[1] == "heads" && refPath[2] == "main":
		refPath = refPath[3:]
	default:
		return false
	}
	return refPath[0] == "plugins"
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// checkRelPath checks a path the frontmatter names (seed "Layout": "Paths are relative and may
// not contain .."): relative, forward slashes, no "..", no scheme, no ?, #, % or control
// characters. It returns the cleaned path.
func checkRelPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("empty path")
	case strings.ContainsRune(p, '\\'):
		return "", fmt.Errorf("path %q: use / between folders", p)
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("path %q: paths are relative to the plugin folder", p)
	case strings.Contains(p, ":"):
		return "", fmt.Errorf("path %q: paths are relative to the plugin folder, not URLs", p)
	case strings.ContainsAny(p, "?#"):
		return "", fmt.Errorf("path %q: paths may not contain ? or #", p)
	case strings.ContainsRune(p, '%'):
		// A link resolves paths as URL paths: %2e%2e would be ".." there, so % is refused.
		return "", fmt.Errorf("path %q: paths may not contain %%; write the file name as it is, not URL-encoded", p)
	case strings.ContainsFunc(p, unicode.IsControl):
		return "", fmt.Errorf("path %q: paths may not contain control characters", p)
	}
	for _, s := range strings.Split(p, "/") {
		if s == ".." {
			return "", fmt.Errorf("path %q: paths may not contain \"..\"", p)
		}
	}
	c := path.Clean(p)
	if c == "." {
		return "", fmt.Errorf("path %q names the plugin folder, not a file", p)
	}
	return c, nil
}
