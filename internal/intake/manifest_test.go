package intake_test

import (
	"fmt"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/stretchr/testify/require"
)

// TestReadManifest_ErrSyntaxLine: a TOML syntax error names the line it is
// on, also at the end of the input, where the TOML parser's own line
// number is one short.
func TestReadManifest_ErrSyntaxLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		line int
	}{
		{`0."\`, 1},
		{"name = \"x\"\nb = \"\\", 2},
		{"name = [\n", 1},
		{"version = 1\nname = \"x\"\n\n[[sources]\n", 4},
	} {
		dir := manifestDir(t, []byte(tc.raw))
		_, ok, err := intake.ReadManifest(dir)
		require.False(t, ok)
		fe := fault.As(err)
		require.Equal(t, fault.InvalidInput, fe.Code, "%q: %v", tc.raw, err)
		require.Equal(t, tc.line, fe.Details["line"], "%q: %v", tc.raw, err)
		require.Contains(t, fe.Message, fmt.Sprintf("%s:%d: ", intake.ManifestPath(dir), tc.line))
	}
}

// TestWriteManifest_ErrNotUTF8: text that is not UTF-8 is refused before
// anything is written, since it could not be read back.
func TestWriteManifest_ErrNotUTF8(t *testing.T) {
	t.Parallel()
	for name, m := range map[string]*intake.Manifest{
		"name":      {Version: 1, Name: "a\xffb"},
		"path":      {Version: 1, Name: "x", Sources: []intake.ManifestSource{{Path: "t\xff.md", Adapter: "markdown_checklist", Role: intake.RoleTasks}}},
		"field_map": {Version: 1, Name: "x", Sources: []intake.ManifestSource{{Path: "t.md", Adapter: "markdown_checklist", Role: intake.RoleTasks}}},
	} {
		if name == "field_map" {
			m.Sources[0].FieldMap = map[string]string{"key": "\xc9"}
		}
		dir := manifestDir(t, []byte("name = \"before\"\n"))
		err := intake.WriteManifest(dir, m)
		require.True(t, fault.Is(err, fault.InvalidInput), "%s: %v", name, err)
		require.Contains(t, err.Error(), "not valid UTF-8", name)
		back, ok, err := intake.ReadManifest(dir)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "before", back.Name, "%s: the old manifest was replaced", name)
	}
}

// TestReadManifest_Continuity: the [continuity] table sets the claim lease
// and the open-loop cap; an absent key keeps its default, an explicit 0
// lease means no expiry, and a value out of range is InvalidInput naming
// the manifest and the key. Every manifest that reads survives a write →
// read round trip.
func TestReadManifest_Continuity(t *testing.T) {
	t.Parallel()
	const head = "version = 1\nname = \"x\"\n"
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			raw      string
			ttl      int64
			loopsCap int
			level    string
		}{
			{head, commands.DefaultClaimTTLms, commands.DefaultOpenLoopCap, commands.DefaultEvidenceLevel},
			{head + "[continuity]\n", commands.DefaultClaimTTLms, commands.DefaultOpenLoopCap, commands.DefaultEvidenceLevel},
			{head + "[continuity]\nclaim_ttl_ms = 600000\n", 600000, commands.DefaultOpenLoopCap, commands.DefaultEvidenceLevel},
			{head + "[continuity]\nclaim_ttl_ms = 0\n", 0, commands.DefaultOpenLoopCap, commands.DefaultEvidenceLevel},
			{head + "[continuity]\nopen_loop_cap = 5\n", commands.DefaultClaimTTLms, 5, commands.DefaultEvidenceLevel},
			{head + "[continuity]\nclaim_ttl_ms = 1\nopen_loop_cap = 1\n", 1, 1, commands.DefaultEvidenceLevel},
			{head + "[continuity]\nevidence_level = \"observed\"\n", commands.DefaultClaimTTLms, commands.DefaultOpenLoopCap, "observed"},
			{head + "[continuity]\nevidence_level = \"note\"\n", commands.DefaultClaimTTLms, commands.DefaultOpenLoopCap, "note"},
		} {
			m, ok, err := intake.ReadManifest(manifestDir(t, []byte(tc.raw)))
			require.NoError(t, err, tc.raw)
			require.True(t, ok)
			require.Equal(t, commands.Policy{ClaimTTLms: tc.ttl, OpenLoopCap: tc.loopsCap, EvidenceLevel: tc.level}, m.Policy(), tc.raw)
			requireRoundTrip(t, m)
		}
		require.Equal(t, commands.DefaultPolicy(), (*intake.Manifest)(nil).Policy())
	})
	t.Run("ErrInvalidInput", func(t *testing.T) {
		t.Parallel()
		for raw, key := range map[string]string{
			head + "[continuity]\nclaim_ttl_ms = -1\n":                  "continuity.claim_ttl_ms",
			head + "[continuity]\nclaim_ttl_ms = 9223372036854775807\n": "continuity.claim_ttl_ms",
			head + "[continuity]\nopen_loop_cap = 0\n":                  "continuity.open_loop_cap",
			head + "[continuity]\nopen_loop_cap = -3\n":                 "continuity.open_loop_cap",
			head + "[continuity]\nevidence_level = \"strong\"\n":        "continuity.evidence_level",
		} {
			dir := manifestDir(t, []byte(raw))
			_, ok, err := intake.ReadManifest(dir)
			require.False(t, ok)
			fe := fault.As(err)
			require.Equal(t, fault.InvalidInput, fe.Code, "%q: %v", raw, err)
			require.Equal(t, key, fe.Details["key"], raw)
			require.Contains(t, fe.Message, intake.ManifestPath(dir))
			require.Contains(t, fe.Message, key)
		}
		_, _, err := intake.ReadManifest(manifestDir(t, []byte(head+"[continuity]\nclaim_ttl = 5\n")))
		require.True(t, fault.Is(err, fault.InvalidInput))
		require.Contains(t, err.Error(), "unknown field continuity.claim_ttl")
	})
}

// TestReadManifest_KeyPattern: a source's key_pattern is read with it, and
// one that does not compile is InvalidInput naming the source.
func TestReadManifest_KeyPattern(t *testing.T) {
	t.Parallel()
	ok := "version = 1\nname = \"x\"\n\n[[sources]]\npath = \".beads/issues.jsonl\"\nadapter = \"beads_jsonl\"\nrole = \"tasks\"\nkey_pattern = 'bd-[0-9a-z]+'\n"
	m, found, err := intake.ReadManifest(manifestDir(t, []byte(ok)))
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, "bd-[0-9a-z]+", m.Sources[0].KeyPattern)

	bad := "version = 1\nname = \"x\"\n\n[[sources]]\npath = \".beads/issues.jsonl\"\nadapter = \"beads_jsonl\"\nrole = \"tasks\"\nkey_pattern = 'bd-[0-9'\n"
	_, _, err = intake.ReadManifest(manifestDir(t, []byte(bad)))
	fe := fault.As(err)
	require.Equal(t, fault.InvalidInput, fe.Code, "%v", err)
	require.Contains(t, fe.Message, "sources[0] (.beads/issues.jsonl): key_pattern \"bd-[0-9\" does not compile")
}
