package secret_test

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"

	"github.com/awr-dev/awr/internal/secret"
	"github.com/awr-dev/awr/internal/secret/secrettest"
	"github.com/stretchr/testify/require"
)

// neighbours are the texts a credential usually stands in: alone, after
// an assignment in an environment file or a YAML or JSON document, in a
// sentence, a header, a URL query, quoted in a command line.
var neighbours = []string{
	"%s", "key=%s", "token: %s", `"secret": "%s"`, "export API_TOKEN=%s", "pushed with %s today",
	"X_%s_Y", "curl -H '%s' https://api.example.com", "[%s]", "value '%s'", "\t%s\n",
}

// Every kind, with a fresh random body, is found in every neighbour; the
// JSON walk finds it in a key or a value and names its path; Redact hides
// its body.
func TestFind_FreshCredentials(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for range 20 {
		for _, c := range secrettest.Fresh(r) {
			f, ok := secret.Find(c.Text)
			require.True(t, ok, c.Text)
			require.Equal(t, c.Kind, f.Kind, c.Text)
			for _, n := range neighbours {
				if strings.HasPrefix(c.Text, `"`) && n == "X_%s_Y" {
					continue // a JSON member glued inside a word is no longer one
				}
				text := strings.Replace(n, "%s", c.Text, 1)
				_, ok := secret.Find(text)
				require.True(t, ok, "%s in %q", c.Kind, text)
				red := secret.Redact(text)
				require.NotContains(t, red, c.Body, "Redact of %q", text)
				require.Contains(t, red, "[withheld: ", text)
				// Quoted as an error quotes it (%q): still found, still hidden.
				quoted := strconv.Quote(text)
				_, ok = secret.Find(quoted)
				require.True(t, ok, "%s in %s", c.Kind, quoted)
				require.NotContains(t, secret.Redact(quoted), c.Body, "Redact of %s", quoted)
			}
		}
	}
}

func TestFindJSON(t *testing.T) {
	t.Parallel()
	tok := "npm_" + strings.Repeat("a1B2", 9)
	for _, tc := range []struct{ doc, path string }{
		{`{"name":"x","items":[{"key":"T-1"},{"key":"` + tok + `"}]}`, "items[1].key"},
		{`{"items":[{"depends_on":[{"key":"T-1"},{"key":"x ` + tok + `"}]}]}`, "items[0].depends_on[1].key"},
		{`{"files":{"` + tok + `.txt":"M"}}`, "files." + tok + ".txt"},
		{`{"a":"\u001b]0;title\u0007 ` + tok + `"}`, "a"},
		{`{"pem":"-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----"}`, "pem"},
		{`["ok","` + tok + `"]`, "[1]"},
	} {
		path, f, ok := secret.FindJSON([]byte(tc.doc))
		require.True(t, ok, tc.doc)
		require.Equal(t, tc.path, path, tc.doc)
		require.NotEmpty(t, f.Kind)
	}
	for _, doc := range []string{`{}`, `{"name":"demo","n":12,"ok":true,"x":null,"l":["a","b\"c"]}`, `{"digest":"rotate the API key before launch"}`} {
		_, _, ok := secret.FindJSON([]byte(doc))
		require.False(t, ok, doc)
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	require.Equal(t, "no secret here", secret.Redact("no secret here"))
	pem := "-----BEGIN RSA PRIVATE KEY-----\\nMIIEabcdef\\n-----END RSA PRIVATE KEY-----"
	got := secret.Redact(`--digest: expected string value but got "` + pem + `" (long flag); perhaps try --digest="` + pem + `"?`)
	require.Equal(t, `--digest: expected string value but got "[withheld: private key block]" (long flag); perhaps try --digest="[withheld: private key block]"?`, got)
	require.Equal(t, "a [withheld: private key block]", secret.Redact("a -----BEGIN PRIVATE KEY-----\nMIIE never ends"))
	require.Equal(t, "AWS_KEY_[withheld: AWS access key id]_prod", secret.Redact("AWS_KEY_AKIAABCDEFGHIJKLMNOP_prod"))
}

// allowed are the lines of the repository's docs and fixtures that hold a
// credential on purpose: the documented refusals' examples and the
// fixture of a secret file intake must never read.
var allowed = map[string]string{
	"docs/commands/rig.md":             "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	"fixtures/projects/bad-files/.env": "AWS_SECRET_ACCESS_KEY=do-not-read",
}

// The detector stays quiet on the repository's own prose and fixtures
// (their data, not the tests among them, which plant credentials on
// purpose): only the documented examples are flagged.
func TestFind_NoFalsePositivesInDocsAndFixtures(t *testing.T) {
	t.Parallel()
	lines, flagged := 0, 0
	for _, root := range []string{testkit.Path("docs"), testkit.Path("fixtures"), testkit.Path("README.md")} {
		err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || info.Size() > 16<<20 {
				return err
			}
			if strings.HasSuffix(p, "_test.go") {
				return nil // test code plants credentials on purpose (fixtures/badinput)
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			rel := strings.TrimPrefix(filepath.ToSlash(p), filepath.ToSlash(testkit.Root())+"/")
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 16<<20)
			for n := 1; sc.Scan(); n++ {
				lines++
				found, ok := secret.Find(sc.Text())
				if !ok {
					continue
				}
				flagged++
				if want, listed := allowed[rel]; listed && strings.Contains(sc.Text(), want) {
					continue
				}
				t.Errorf("%s:%d flagged as a %s", rel, n, found.Kind)
			}
			return sc.Err()
		})
		require.NoError(t, err)
	}
	require.Greater(t, lines, 10000, "the scan read the docs and fixtures")
	t.Logf("%d lines, %d flagged (all documented examples)", lines, flagged)
}
