// Package secrettest makes fresh credentials for tests: each of the kinds
// package secret refuses, with a random body drawn at test time, so that
// no real secret is ever committed and no test passes because it knows
// one fixed string.
package secrettest

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Credential is one fresh credential: the kind secret.Find names and the
// text to plant. Body is the random part of Text, which must never be
// found where the credential was refused (a test searches for it).
type Credential struct {
	Kind string
	Text string
	Body string
}

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	alnum       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

func draw(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// Fresh returns one credential of every kind, their bodies drawn from r.
// Every Text is a single line without spaces at its ends, except the
// private key block, which spans lines as a real one does.
func Fresh(r *rand.Rand) []Credential {
	c := func(kind, prefix, body, suffix string) Credential {
		return Credential{Kind: kind, Text: prefix + body + suffix, Body: body}
	}
	pem := base64.StdEncoding.EncodeToString([]byte(draw(r, alnum, 96)))
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:" + draw(r, alnum, 18)))
	return []Credential{
		c("GitHub token", "ghp_", draw(r, alnum, 36), ""),
		c("GitHub token", "github_pat_", draw(r, alnum, 22)+"_"+draw(r, alnum, 59), ""),
		c("AWS access key id", "AKIA", draw(r, upperDigits, 16), ""),
		c("AWS access key id", "ASIA", draw(r, upperDigits, 16), "_prod"),
		c("AWS secret access key", "aws_secret_access_key=", draw(r, alnum, 40), ""),
		{Kind: "private key block", Text: "-----BEGIN RSA PRIVATE KEY-----\n" + pem + "\n-----END RSA PRIVATE KEY-----", Body: pem[:40]},
		c("password assignment", "DB_PASSWORD=", draw(r, alnum, 20), ""),
		c("authorization header", "Authorization: Bearer ", draw(r, alnum, 32), ""),
		{Kind: "authorization header", Text: "Authorization: Basic " + basic, Body: basic},
		c("npm token", "npm_", draw(r, alnum, 36), ""),
		c("Slack token", "xoxb-", draw(r, "0123456789", 12)+"-"+draw(r, alnum, 24), ""),
		c("Slack token", "xapp-1-", draw(r, alnum, 30), ""),
		c("Stripe secret key", "sk_live_", draw(r, alnum, 24), ""),
		c("Stripe secret key", "rk_live_", draw(r, alnum, 24), ""),
		c("Stripe secret key", "sk_test_", draw(r, alnum, 24), ""),
		c("Google API key", "AIza", draw(r, alnum, 35), ""),
		c("Google service account key", `"private_key_id": "`, strings.ToLower(draw(r, "0123456789abcdef", 40)), `"`),
		c("Azure storage or service bus key", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=", draw(r, alnum, 86)+"==", ";EndpointSuffix=core.windows.net"),
		c("GitLab token", "glpat-", draw(r, alnum, 20), ""),
		c("OpenAI or Anthropic API key", "sk-ant-api03-", draw(r, alnum, 40), ""),
	}
}
