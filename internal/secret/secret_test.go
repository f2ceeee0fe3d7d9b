package secret

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFind(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE...":                         "private key block",
		"-----BEGIN OPENSSH PRIVATE KEY-----":                              "private key block",
		"key AKIAIOSFODNN7EXAMPLE in env":                                  "AWS access key id",
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "AWS secret access key",
		"token ghp_abcdefghijklmnopqrstuvwxyz0123456789":                   "GitHub token",
		"use glpat-abcdefghij0123456789xyz":                                "GitLab token",
		"xoxb-123456789012-abcdefghijkl":                                   "Slack token",
		"sk_live_abcdefghijklmnop1234":                                     "Stripe secret key",
		"sk-ant-abcdefghijklmnopqrstuvwxyz":                                "OpenAI or Anthropic API key",
		"set password=hunter2hunter":                                       "password assignment",
		"DB_PASSWORD: 'S3cret!pass'":                                       "password assignment",
		"postgres://app:s3cretpw@db.internal/app":                          "credentials in a URL",
	}
	for s, kind := range secrets {
		f, ok := Find(s)
		require.True(t, ok, s)
		require.Equal(t, kind, f.Kind, s)
	}
	for _, s := range []string{
		"Added carts table migration; tests written, not yet run.",
		"Decide the password reset flow with product",
		"Rotate the API key before launch",
		"see https://example.com/docs",
		"AKIA is the prefix AWS uses",
		"",
	} {
		_, ok := Find(s)
		require.False(t, ok, s)
	}
}

// The cheap prefilters never hide a match: each detector answers the same
// with and without its prefilter, including for case folds outside ASCII.
func TestPrefilterIsNecessary(t *testing.T) {
	texts := []string{
		"paſsword=hunter2hunter", "PASSWORD: correct-horse", "AWS_SECRET_ACCESS_KEY=" + strings.Repeat("a", 40),
		"ApI_KeY = abcdef123", "HTTPS://USER:PASS1234@EXAMPLE.COM/", "auth-token:zzzzzzzz", "aws_ſecret_access_key=" + strings.Repeat("B", 40),
		"nothing to see here at all", "sk-ant-abcdefghijklmnopqrstuvwxyz", "eyJabcdefghij.eyJabcdefghij.abcdefghijk",
		"Account\u212aey=" + strings.Repeat("Zz9", 10), "to\u212aen: abcdefgh123", "AUTHORIZATION: BASIC dXNlcjpwYXNz", "BEARER " + strings.Repeat("x9", 12),
		"Shared\u212fccessKey=" + strings.Repeat("Q", 30), "xapp-1-ABCDEFGHIJKLMNOP", "npm_" + strings.Repeat("a", 36),
	}
	for _, text := range texts {
		lower := strings.Map(fold, text)
		for _, d := range detectors() {
			if d.re.MatchString(text) && !d.may(text, lower) {
				t.Errorf("%s: the prefilter hides a match in %q", d.kind, text)
			}
		}
	}
}
