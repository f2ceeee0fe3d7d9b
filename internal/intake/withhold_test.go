package intake_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/intake/source"
	"github.com/stretchr/testify/require"
)

// A secret anywhere in a source's text is withheld before parsing: a
// dependency list cannot take an assignment's name as a key and leave its
// value in the title; a PEM block spanning lines keeps the lines after it
// numbered as in the file; the issue names the line and the kind.
func TestRead_SecretsWithheldBeforeParsing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	body := strings.Repeat("Qx7", 14)
	content := "# TODO\n\n- [ ] T-1: Wait depends on aws_secret_access_key=" + body[:40] + "\n" +
		"- [ ] T-2: Key\n  -----BEGIN RSA PRIVATE KEY-----\n  " + body + "\n  -----END RSA PRIVATE KEY-----\n" +
		"- [ ] T-3: After the key\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte(content), 0o600))
	si, missing := intake.Read(dir, intake.ManifestSource{Path: "TODO.md", Adapter: source.MarkdownChecklist, Role: intake.RoleTasks})
	require.False(t, missing)
	all := ""
	for _, it := range si.Items {
		all += strings.Join([]string{it.Key, it.Title, it.Summary, strings.Join(it.Acceptance, " ")}, " ")
		for _, d := range it.DependsOn {
			all += " " + d.Key
		}
	}
	require.NotContains(t, all, "Qx7")
	require.NotContains(t, all, "aws_secret")
	var keys []string
	for _, it := range si.Items {
		keys = append(keys, it.Key)
		if it.Key == "T-3" {
			require.Equal(t, 8, it.Source.LineStart, "lines after a withheld block keep their numbers")
		}
	}
	require.Contains(t, keys, "T-3")
	var lines []int
	for _, is := range si.Issues {
		require.NotContains(t, is.Message, "Qx7")
		if is.Code == intake.IssueSecretWithheld {
			lines = append(lines, is.Line)
		}
	}
	require.Contains(t, lines, 3)
	require.Contains(t, lines, 5)
}
