package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
)

// otherProject records the demo handoff with its own clock and entropy: a
// second project whose every event differs from demoProject's.
func otherProject(t *testing.T) (string, []byte) {
	return recordDemo(t, time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC), 700*time.Millisecond, 2)
}

func splitLines(export []byte) []string {
	return strings.SplitAfter(strings.TrimSuffix(string(export), "\n"), "\n")
}

// TestImport_MixedProjects splices the exports of two real projects in
// every way an import could mix them: a prefix of one with the rest of
// the other at every seam, one line of the other swapped in at every
// position, the other's whole log appended, and the other's export
// imported into a project that already has a log. Each is refused with a
// coded error naming the first foreign line, imports nothing, and leaves
// both projects as they were.
func TestImport_MixedProjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dirA, exportA := demoProject(t)
	dirB, exportB := otherProject(t)
	a, b := splitLines(exportA), splitLines(exportB)
	require.Equal(t, len(a), len(b))
	for i := range a {
		require.NotEqual(t, a[i], b[i], "line %d is the same in both projects", i+1)
	}

	refused := func(t *testing.T, content string, wantLine int, wantMsg string) {
		t.Helper()
		st := openProject(t, t.TempDir())
		defer st.Close()
		_, err := replay.Import(ctx, st, strings.NewReader(content), "mixed.jsonl")
		fe := fault.As(err)
		require.Equal(t, fault.InvalidInput, fe.Code, "%v", err)
		require.Equal(t, wantLine, fe.Details["line"], fe.Message)
		require.Contains(t, fe.Message, fmt.Sprintf("mixed.jsonl:%d: ", wantLine))
		require.Contains(t, fe.Message, wantMsg)
		require.Contains(t, fe.Message, "nothing was imported")
		require.Equal(t, "awr export --project SOURCE_DIR --output FILE", fe.Hint)
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			require.Zero(t, r.Head, "a refused import appended events")
			return nil
		}))
	}

	t.Run("ErrSplicedAtEverySeam", func(t *testing.T) {
		t.Parallel()
		for k := 1; k < len(a); k++ {
			mixed := strings.Join(a[:k], "") + strings.Join(b[k:], "")
			refused(t, mixed, k+1, fmt.Sprintf("seq %d: prev_hash", k+1))
			mixed = strings.Join(b[:k], "") + strings.Join(a[k:], "")
			refused(t, mixed, k+1, fmt.Sprintf("seq %d: prev_hash", k+1))
		}
	})
	t.Run("ErrOneForeignLine", func(t *testing.T) {
		t.Parallel()
		for k := 0; k < len(a); k++ {
			mixed := append([]string{}, a...)
			mixed[k] = b[k]
			if k == 0 {
				// The foreign first line is a chain of its own; the
				// project's second line does not follow it.
				refused(t, strings.Join(mixed, ""), 2, "seq 2: prev_hash")
				continue
			}
			refused(t, strings.Join(mixed, ""), k+1, fmt.Sprintf("seq %d: prev_hash", k+1))
		}
	})
	t.Run("ErrOtherLogAppended", func(t *testing.T) {
		t.Parallel()
		refused(t, string(exportA)+string(exportB), len(a)+1, fmt.Sprintf("seq 1 does not follow project_revision %d", len(a)))
	})
	t.Run("ErrIntoAnotherProject", func(t *testing.T) {
		t.Parallel()
		st := openProject(t, dirA)
		defer st.Close()
		_, err := replay.Import(ctx, st, bytes.NewReader(exportB), "b.jsonl")
		require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
		require.EqualValues(t, len(a), fault.As(err).Details["project_revision"])
		var again bytes.Buffer
		_, err = replay.Export(ctx, st, &again, -1)
		require.NoError(t, err)
		require.Equal(t, string(exportA), again.String(), "the refused import changed the project")
		v, err := replay.Verify(ctx, st, nil)
		require.NoError(t, err)
		require.True(t, v.OK)
	})
	t.Run("BothStillImport", func(t *testing.T) {
		t.Parallel()
		for dir, export := range map[string][]byte{dirA: exportA, dirB: exportB} {
			st := openProject(t, t.TempDir())
			res, err := replay.Import(ctx, st, bytes.NewReader(export), "ok.jsonl")
			require.NoError(t, err, dir)
			require.EqualValues(t, len(a), res.Events)
			v, err := replay.Verify(ctx, st, nil)
			require.NoError(t, err)
			require.True(t, v.OK)
			st.Close()
		}
	})
}
