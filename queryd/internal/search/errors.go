package search

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

var (
	urlPattern    = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)
	secretPattern = regexp.MustCompile(`(?i)\b(api[_-]?key|token|password|secret)(\s*[=:]\s*)[^\s,;"')]+`)
	bearerPattern = regexp.MustCompile(`(?i)\b(bearer\s+)[^\s,;"')]+`)
	skKeyPattern  = regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{6,}`)
	pathPattern   = regexp.MustCompile(`(?:/[^\s/:;,"'()=]+){2,}`)
)

// redact prepares an error for a response that any reader sees: it removes
// credentials and query strings from URLs, values of keys, tokens and
// passwords, and shortens absolute paths to their last element. The server
// log keeps the whole error.
func redact(s string) string {
	// URLs are set aside first, so that their paths are not taken for
	// file paths.
	var urls []string
	s = urlPattern.ReplaceAllStringFunc(s, func(raw string) string {
		r := "[url]"
		if u, err := url.Parse(raw); err == nil {
			hadUser := u.User != nil
			u.User = nil
			if u.RawQuery != "" {
				u.RawQuery = "***"
			}
			r = u.String()
			if hadUser {
				r = strings.Replace(r, "://", "://***@", 1)
			}
		}
		urls = append(urls, r)
		return fmt.Sprintf("\x00%d\x00", len(urls)-1)
	})
	s = secretPattern.ReplaceAllString(s, "$1$2***")
	s = bearerPattern.ReplaceAllString(s, "$1***")
	s = skKeyPattern.ReplaceAllString(s, "sk-***")
	s = pathPattern.ReplaceAllStringFunc(s, shortPath)
	for i, u := range urls {
		s = strings.Replace(s, fmt.Sprintf("\x00%d\x00", i), u, 1)
	}
	const max = 300
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func shortPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return p
	}
	return "…" + p[i:]
}
