package hosts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPacketUpdate(t *testing.T) {
	t.Parallel()
	old := "# Work context: W-1\nAs of project_revision 6\n\n## Work W-1: Store notes\nStatus: planned\n\n## Next action\nwrite the schema\n"
	_, held := PacketLines(old)

	t.Run("Unchanged", func(t *testing.T) {
		// Only the revision moved: nothing to send.
		lines, digests := PacketLines(strings.Replace(old, "revision 6", "revision 9", 1))
		added, gone := PacketUpdate(held, lines, digests)
		require.Empty(t, added)
		require.Zero(t, gone)
	})
	t.Run("Changed", func(t *testing.T) {
		lines, digests := PacketLines(strings.Replace(old, "write the schema", "test the store", 1) + "\n## Latest checkpoint C\nDigest: stored notes\n")
		added, gone := PacketUpdate(held, lines, digests)
		require.Equal(t, []string{"## Next action", "test the store", "## Latest checkpoint C", "Digest: stored notes"}, added)
		require.Equal(t, 1, gone)
	})
	t.Run("Removed", func(t *testing.T) {
		lines, digests := PacketLines(strings.Replace(old, "Status: planned\n", "", 1))
		added, gone := PacketUpdate(held, lines, digests)
		require.Empty(t, added)
		require.Equal(t, 1, gone)
	})
}

// TestRecordingHolds: what a Gemini CLI conversation holds now is read in
// its chat recording from the last record that set its messages whole (a
// start, a resume, a compression), and in the prompt being sent.
func TestRecordingHolds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "session.jsonl")
	old, cur := "packet aaaaaaaaaaaa", "packet bbbbbbbbbbbb"
	write := func(lines ...string) {
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	}
	write(`{"sessionId":"s"}`, `{"$set":{"messages":[]}}`,
		`{"id":"m1","type":"user","content":[{"text":"go\n<hook_context># awr: continuing session S (`+old+`)</hook_context>"}]}`)
	i, read := RecordingHolds(path, "next prompt", []string{cur, old})
	require.True(t, read)
	require.Equal(t, 1, i, "the conversation holds the older packet")
	i, _ = RecordingHolds(path, "next\n<hook_context># awr: continuing session S ("+cur+")</hook_context>", []string{cur, old})
	require.Equal(t, 0, i, "the prompt carries the latest one (its SessionStart gave it)")

	// A compression sets the messages whole, without the packet.
	write(`{"sessionId":"s"}`, `{"$set":{"messages":[]}}`,
		`{"id":"m1","type":"user","content":[{"text":"`+old+`"}]}`,
		`{"$set":{"messages":[{"id":"m9","type":"user","content":[{"text":"<state_snapshot>summary</state_snapshot>"}]}],"lastUpdated":"x"}}`)
	i, read = RecordingHolds(path, "next prompt", []string{cur, old})
	require.True(t, read)
	require.Equal(t, -1, i, "what preceded the last whole set is gone")

	_, read = RecordingHolds(filepath.Join(dir, "missing.jsonl"), "p", []string{cur})
	require.False(t, read)
	_, read = RecordingHolds("", "p", []string{cur})
	require.False(t, read)
}

func TestForkOrigin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "fork.jsonl")
	transcript := `{"content":"This conversation (claude:aaaa-1) is not bound to an awr session yet."}` + "\n" +
		`{"content":"This conversation (claude:bbbb-2) is bound to awr session S."}` + "\n" +
		`{"content":"This conversation (claude:self-3) is bound to awr session S."}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(transcript), 0o600))
	require.Equal(t, []string{"claude:bbbb-2", "claude:aaaa-1"}, ForkOrigin(path, "claude:self-3"), "latest first, itself left out")
	require.Nil(t, ForkOrigin(filepath.Join(dir, "missing.jsonl"), "claude:x"), "a transcript not written yet")
	require.Nil(t, ForkOrigin("", "claude:x"))
	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink(path, link))
	require.Nil(t, ForkOrigin(link, "claude:x"), "never through a symbolic link")
	require.Nil(t, ForkOrigin(dir, "claude:x"), "a directory")
}

func TestUnsavedSummary(t *testing.T) {
	t.Parallel()
	require.Equal(t, "the repository changed since checkpoint C", UnsavedSummary("checkpoint C", nil))
	require.Equal(t, "1 file changed since the session started (a.go)", UnsavedSummary("the session started", []string{"a.go"}))
	require.Equal(t, "5 files changed since checkpoint C (a, b, c and 2 more)", UnsavedSummary("checkpoint C", []string{"a", "b", "c", "d", "e"}))
}
