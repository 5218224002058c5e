package cmd

import (
	"net/url"
	"strings"
)

// credentialHeader reports whether a header carries a credential, so that
// its value never reaches any output: Authorization, x-api-key, api-key,
// cookies, and any name that speaks of a key, token, secret or auth.
func credentialHeader(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"authorization", "key", "token", "secret", "auth", "cookie", "password"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// redactHeader returns 'Name: value' with the value hidden when the header
// carries a credential (or cannot be parsed, when nobody can tell).
func redactHeader(h string) string {
	name, _, ok := strings.Cut(h, ":")
	if !ok {
		return "[redacted]"
	}
	if credentialHeader(name) {
		return strings.TrimSpace(name) + ": [redacted]"
	}
	return h
}

// redactURL drops any user information and query from a URL for output.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[unparseable URL]"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "[redacted]"
	}
	return u.String()
}
