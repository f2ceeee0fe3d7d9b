// Package secret recognizes credential-like strings so that they never
// enter the log: the log is immutable, and a secret written into it could
// never be removed.
package secret

import (
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/awr-dev/awr/internal/lazyre"
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
	// edged is set when re begins with edge, which may take the
	// character before the token.
	edged bool
}

// det is a detector of kind with expression src and prefilter may.
func det(kind, src string, may func(s, lower string) bool) detector {
	return detector{kind: kind, re: lazyre.New(src), may: may, edged: strings.HasPrefix(src, edge)}
}

func hasAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// edge is what may stand just before a token whose own first character
// is a word character: the start of the text, anything but a letter or
// a digit (an underscore too: AWS_KEY_AKIA… is still a key), or the
// escape of a newline, tab or carriage return in quoted text ("\nAKIA…").
const edge = `(?:^|[^A-Za-z0-9]|\\[nrt])`

// assignKeys are the names a credential is assigned to in configuration,
// environment files and JSON (`DB_PASSWORD=…`, `token: …`,
// `"client_secret": "…"`).
const assignKeys = `(password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token|refresh[_-]?token)`

// detectors are the credential formats awr refuses: private key blocks,
// common cloud, code-host, chat, payment and package-registry tokens,
// HTTP authorization headers, and password-style assignments. They are
// made on the first Find, so that a command that writes nothing pays
// nothing for them at start-up.
var detectors = sync.OnceValue(func() []detector {
	return []detector{
		det("private key block", `-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----`,
			func(s, _ string) bool { return strings.Contains(s, "PRIVATE KEY") }),
		// An AWS key id is found even inside a longer word (AKIA…_prod,
		// AKIA…abc): only a letter or digit just before it hides it.
		det("AWS access key id", edge+`(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}`,
			func(s, _ string) bool { return hasAny(s, "AKIA", "ASIA", "ABIA", "ACCA") }),
		det("AWS secret access key", `(?i)aws_?secret_?access_?key\\?["']?\s*[:=]\s*\\?["']?[A-Za-z0-9/+=]{40}`,
			func(_, l string) bool { return strings.Contains(l, "aws") && strings.Contains(l, "secret") }),
		det("GitHub token", edge+`(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`,
			func(s, _ string) bool { return hasAny(s, "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_") }),
		det("GitLab token", edge+`glpat-[A-Za-z0-9_\-]{20,}`,
			func(s, _ string) bool { return strings.Contains(s, "glpat-") }),
		det("npm token", edge+`npm_[A-Za-z0-9]{36}`,
			func(s, _ string) bool { return strings.Contains(s, "npm_") }),
		det("Slack token", edge+`(xox[abeoprs]-[A-Za-z0-9-]{10,}|xapp-[0-9]+-[A-Za-z0-9-]{10,})`,
			func(s, _ string) bool { return hasAny(s, "xox", "xapp-") }),
		det("Slack webhook", `hooks\.slack\.com/(services|workflows)/[A-Za-z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9]{8,}`,
			func(s, _ string) bool { return strings.Contains(s, "hooks.slack.com/") }),
		det("Google API key", edge+`AIza[0-9A-Za-z_\-]{35}`,
			func(s, _ string) bool { return strings.Contains(s, "AIza") }),
		det("Google service account key", `\\?"private_key(_id)?\\?"\s*:\s*\\?"(-----BEGIN|[0-9a-f]{40})`,
			func(s, _ string) bool { return strings.Contains(s, `"private_key`) }),
		det("Azure storage or service bus key", `(?i)(AccountKey|SharedAccessKey|SharedAccessSignature|SharedSecret)\s*=\s*[A-Za-z0-9+/%]{20,}`,
			func(_, l string) bool { return hasAny(l, "accountkey", "sharedaccess", "sharedsecret") }),
		det("Azure SAS signature", `[?&]sig=[A-Za-z0-9%+/]{30,}`,
			func(s, _ string) bool { return strings.Contains(s, "sig=") }),
		det("Stripe secret key", edge+`(sk|rk)_(live|test)_[0-9A-Za-z]{16,}`,
			func(s, _ string) bool { return hasAny(s, "_live_", "_test_") }),
		det("OpenAI or Anthropic API key", edge+`sk-(ant-|proj-)?[A-Za-z0-9_\-]{20,}`,
			func(s, _ string) bool { return strings.Contains(s, "sk-") }),
		det("JSON web token", `\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b`,
			func(s, _ string) bool { return strings.Contains(s, "eyJ") }),
		// An Authorization header's value is a credential whatever its
		// shape (an opaque bearer token, base64 user:password); a bearer
		// token is recognized without the header name too, once it is
		// long enough not to be a word.
		det("authorization header", `(?i)authorization\\?["']?\s*[:=]\s*\\?["']?\s*(bearer|basic|token|digest|negotiate)\s+[A-Za-z0-9._~+/\-]{8,}`,
			func(_, l string) bool { return strings.Contains(l, "authorization") }),
		det("bearer token", `(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{20,}`,
			func(_, l string) bool { return strings.Contains(l, "bearer") }),
		det("password assignment", `(?i)`+assignKeys+`\\?["']?\s*[:=]\s*\\?["']?`+"[^\\s\"'`]{6,}",
			func(_, l string) bool {
				return strings.ContainsAny(l, ":=") && hasAny(l, "password", "passwd", "pwd", "secret", "token", "key")
			}),
		det("credentials in a URL", `(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]{3,}@`,
			func(s, _ string) bool { return strings.Contains(s, "://") && strings.Contains(s, "@") }),
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

// lowered is s folded as fold does: for ASCII text strings.ToLower,
// which returns s itself when it has no upper-case letter (most text the
// log stores), so the check allocates nothing.
func lowered(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return strings.Map(fold, s)
		}
	}
	return strings.ToLower(s)
}

// Find returns the first kind of secret in s, if any.
func Find(s string) (Finding, bool) {
	if len(s) < 8 || len(strings.TrimSpace(s)) < 8 {
		return Finding{}, false
	}
	lower := lowered(s)
	for _, d := range detectors() {
		if d.may(s, lower) && d.re.MatchString(s) {
			return Finding{Kind: d.kind}, true
		}
	}
	return Finding{}, false
}

// pemEnd ends the redaction of a private key block: its END line, or the
// end of the text.
var pemEnd = lazyre.New(`-----END ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----`)

// Span is where Spans found a secret in a text: bytes From to To, and
// its kind.
type Span struct {
	From, To int
	Kind     string
}

// Spans returns where the secrets Find would see lie in s, in order and
// without overlap: each detector's matches, a private key block from its
// BEGIN line through its END line (or to the end of s). None for a text
// without a secret.
func Spans(s string) []Span {
	if _, ok := Find(s); !ok {
		return nil
	}
	var spans []Span
	lower := lowered(s)
	for _, d := range detectors() {
		if !d.may(s, lower) {
			continue
		}
		for _, m := range d.re.FindAllStringIndex(s, -1) {
			from, to := m[0], m[1]
			if d.edged && !isAlnum(s[from]) {
				// The character, or the escape, before the token.
				if s[from] == '\\' && from+2 < to && strings.IndexByte("nrt", s[from+1]) >= 0 {
					from++
				}
				from++
			}
			if d.kind == "private key block" {
				if end := pemEnd.FindStringIndex(s[to:]); end != nil {
					to += end[1]
				} else {
					to = len(s)
				}
			}
			spans = append(spans, Span{from, to, d.kind})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].From < spans[j].From })
	out := spans[:0]
	for _, sp := range spans {
		if n := len(out); n > 0 && sp.From < out[n-1].To {
			out[n-1].To = max(out[n-1].To, sp.To)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// Redact returns s with every secret Find would see replaced by
// "[withheld: KIND]" (a private key block from its BEGIN line through its
// END line, or to the end of s), for text that must be shown but may
// quote what was refused: an error about a bad flag value, a parser's
// message. Text without a secret is returned unchanged.
func Redact(s string) string {
	spans := Spans(s)
	if spans == nil {
		return s
	}
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		b.WriteString(s[at:sp.From])
		b.WriteString("[withheld: " + sp.Kind + "]")
		at = sp.To
	}
	b.WriteString(s[at:])
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}
