// Package secret recognizes credential-like strings so that they never
// enter the log: the log is immutable, and a secret written into it could
// never be removed.
package secret

import (
	"regexp"
	"strings"
)

// Finding names the kind of secret found, never the secret itself.
type Finding struct {
	Kind string
}

type detector struct {
	kind string
	re   *regexp.Regexp
}

// detectors are the credential formats awr refuses: private key blocks,
// common cloud and code-host tokens, and password-style assignments.
var detectors = []detector{
	{"private key block", regexp.MustCompile(`-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----`)},
	{"AWS access key id", regexp.MustCompile(`\b(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`)},
	{"AWS secret access key", regexp.MustCompile(`(?i)aws_?secret_?access_?key\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}`)},
	{"GitHub token", regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`)},
	{"GitLab token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}\b`)},
	{"Slack token", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}\b`)},
	{"Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}\b`)},
	{"Stripe secret key", regexp.MustCompile(`\b(sk|rk)_(live|test)_[0-9A-Za-z]{16,}\b`)},
	{"OpenAI or Anthropic API key", regexp.MustCompile(`\bsk-(ant-|proj-)?[A-Za-z0-9_\-]{20,}\b`)},
	{"JSON web token", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b`)},
	{"password assignment", regexp.MustCompile(`(?i)(password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\s*[:=]\s*["']?[^\s"']{6,}`)},
	{"credentials in a URL", regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]{3,}@`)},
}

// Find returns the first kind of secret in s, if any.
func Find(s string) (Finding, bool) {
	if len(strings.TrimSpace(s)) < 8 {
		return Finding{}, false
	}
	for _, d := range detectors {
		if d.re.MatchString(s) {
			return Finding{Kind: d.kind}, true
		}
	}
	return Finding{}, false
}
