package events

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestDecodeWorkItem_FastPath: the JSON awr writes for a work item (any
// text, lists nil, empty or not, any integers) is taken by the fast path,
// never handed to encoding/json.
func TestDecodeWorkItem_FastPath(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.String()
		list := rapid.SliceOfN(text, -1, 3)
		w := WorkItem{
			Key: text.Draw(t, "key"), Title: text.Draw(t, "title"), Status: text.Draw(t, "status"),
			Summary: text.Draw(t, "summary"), NextAction: text.Draw(t, "next_action"),
			Acceptance: list.Draw(t, "acceptance"), Tags: list.Draw(t, "tags"),
			Source: SourceRef{Path: text.Draw(t, "path"), LineStart: rapid.Int().Draw(t, "line_start"), LineEnd: rapid.Int().Draw(t, "line_end")},
		}
		if rapid.Bool().Draw(t, "deps") {
			w.DependsOn = []Dependency{{Key: text.Draw(t, "dep"), Required: rapid.Bool().Draw(t, "required")}}
		}
		plain, err := json.Marshal(w)
		require.NoError(t, err)
		canonical, err := CanonicalJSON(plain)
		require.NoError(t, err)
		for _, data := range [][]byte{plain, canonical} {
			var got WorkItem
			d := itemDecoder{b: data}
			require.True(t, d.workItem(&got), "%s", data)
		}
	})
}

func BenchmarkDecodeWorkItem(b *testing.B) {
	data, err := json.Marshal(WorkItem{
		Key: "T-042", Title: "Make the register's readiness \"flat\" <fast>", Status: "in_progress", Kind: "task", Priority: "p1",
		Summary: "A summary of a few words\nover two lines — with a dash.", NextAction: "awr session start --work T-042 --claim",
		Acceptance: []string{"status at 1M events within 1.2x of 10k", "docs updated"},
		DependsOn:  []Dependency{{Key: "T-041", Required: true}, {Key: "T-007"}},
		Goal:       "G-speed", Tags: []string{"speed", "reads"}, Paths: []string{"projections/work.go"},
		Source: SourceRef{Path: "TASKS.md", LineStart: 120, LineEnd: 134, ContentHash: "9f2c4e0b7a61d3f8"},
	})
	require.NoError(b, err)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var w WorkItem
			if err := DecodeWorkItem(data, &w); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var w WorkItem
			if err := json.Unmarshal(data, &w); err != nil {
				b.Fatal(err)
			}
		}
	})
}
