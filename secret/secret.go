// Package secret recognizes credential-like strings so that they never
// enter the log: the log is immutable, and a secret written into it could
// never be removed.
package secret

import (
	"strings"
	"sync"
	"unicode"

	"github.com/awr-dev/awr/lazyre"
)

// Finding names the kind of secret found, never the secret itself.
type Finding struct {
	Kind string
}

type detector struct {
	kind string
	re   *lazyre.Regexp
	// may is a cheap necessary condition for re to match (s, and s in
	// lower case): most text has no secret, and the regexps cost far more
	// than these substring checks.
	may func(s, lower string) bool
}

func hasAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// detectors are the credential formats awr refuses: private key blocks,
// common cloud and code-host tokens, and password-style assignments. They
// are made on the first Find, so that a command that writes nothing pays
// nothing for them at start-up.
var detectors = sync.OnceValue(func() []detector {
	return []detector{
		{"private key block", lazyre.New(`-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----`),
			func(s, _ string) bool { return strings.Contains(s, "PRIVATE KEY") }},
		{"AWS access key id", lazyre.New(`\b(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`),
			func(s, _ string) bool { return hasAny(s, "AKIA", "ASIA", "ABIA", "ACCA") }},
		{"AWS secret access key", lazyre.New(`(?i)aws_?secret_?access_?key\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}`),
			func(_, l string) bool { return strings.Contains(l, "aws") && strings.Contains(l, "secret") }},
		{"GitHub token", lazyre.New(`\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`),
			func(s, _ string) bool { return hasAny(s, "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_") }},
		{"GitLab token", lazyre.New(`\bglpat-[A-Za-z0-9_\-]{20,}\b`),
			func(s, _ string) bool { return strings.Contains(s, "glpat-") }},
		{"Slack token", lazyre.New(`\bxox[abprs]-[A-Za-z0-9-]{10,}\b`),
			func(s, _ string) bool { return strings.Contains(s, "xox") }},
		{"Google API key", lazyre.New(`\bAIza[0-9A-Za-z_\-]{35}\b`),
			func(s, _ string) bool { return strings.Contains(s, "AIza") }},
		{"Stripe secret key", lazyre.New(`\b(sk|rk)_(live|test)_[0-9A-Za-z]{16,}\b`),
			func(s, _ string) bool { return hasAny(s, "_live_", "_test_") }},
		{"OpenAI or Anthropic API key", lazyre.New(`\bsk-(ant-|proj-)?[A-Za-z0-9_\-]{20,}\b`),
			func(s, _ string) bool { return strings.Contains(s, "sk-") }},
		{"JSON web token", lazyre.New(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b`),
			func(s, _ string) bool { return strings.Contains(s, "eyJ") }},
		{"password assignment", lazyre.New(`(?i)(password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\s*[:=]\s*["']?[^\s"']{6,}`),
			func(_, l string) bool {
				return strings.ContainsAny(l, ":=") && hasAny(l, "password", "passwd", "pwd", "secret", "api", "access", "auth")
			}},
		{"credentials in a URL", lazyre.New(`(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]{3,}@`),
			func(s, _ string) bool { return strings.Contains(s, "://") && strings.Contains(s, "@") }},
	}
})

// fold lowers r the way the case-insensitive detectors compare it: the
// two non-ASCII letters that fold to ASCII ones (long s, Kelvin sign)
// become those letters.
func fold(r rune) rune {
	switch r {
	case 'ſ':
		return 's'
	case 'K':
		return 'k'
	}
	return unicode.ToLower(r)
}

// Find returns the first kind of secret in s, if any.
func Find(s string) (Finding, bool) {
	if len(strings.TrimSpace(s)) < 8 {
		return Finding{}, false
	}
	lower := strings.Map(fold, s)
	for _, d := range detectors() {
		if d.may(s, lower) && d.re.MatchString(s) {
			return Finding{Kind: d.kind}, true
		}
	}
	return Finding{}, false
}
