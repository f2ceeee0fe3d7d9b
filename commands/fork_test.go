package commands_test

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

// replicaOf makes te's log a replica whose recorded origin is its head,
// changed by alter, and returns the log's project id and head.
func replicaOf(t *testing.T, te *testEnv, alter func(o *events.Origin)) (string, events.Head) {
	t.Helper()
	ctx := context.Background()
	head, err := te.Store.Head(ctx)
	require.NoError(t, err)
	var pid string
	require.NoError(t, te.Store.Read(ctx, func(r *events.Reader) error {
		l, err := events.ReadLineage(r.Conn)
		pid = l.Current()
		return err
	}))
	o := events.Origin{ProjectID: pid, HeadSeq: head.Revision, HeadHash: hex.EncodeToString(head.Hash), ImportedAt: te.now.UnixMilli()}
	alter(&o)
	_, err = te.Store.Write(ctx, events.WriteOptions{Now: te.now, Entropy: te.Entropy, Actor: "import"}, func(tx *events.Tx) (any, error) {
		return nil, tx.RecordOrigin(o)
	})
	require.NoError(t, err)
	return pid, head
}

// TestFork_NewID: a fork is a project of its own: its project_forked
// names a new project id, never the origin's, and the log's lineage is
// the fork's from that event on.
func TestFork_NewID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	pid, head := replicaOf(t, te, func(*events.Origin) {})
	res, err := commands.Fork(ctx, te.Env, commands.ForkRequest{Accept: true, Agent: "auditor"})
	require.NoError(t, err)
	require.NotEmpty(t, res.Fork.ProjectID)
	require.NotEqual(t, pid, res.Fork.ProjectID)
	require.Equal(t, pid, res.Fork.Origin.ProjectID)
	require.Equal(t, head.Revision+1, res.Fork.Seq)
	require.NoError(t, te.Store.Read(ctx, func(r *events.Reader) error {
		l, err := events.ReadLineage(r.Conn)
		require.Equal(t, []string{pid, res.Fork.ProjectID}, []string{l.Lines[0].ProjectID, l.Current()})
		return err
	}))
}

// TestFork_OriginNotHead: a replica whose recorded origin is not its own
// log's head (the row beside the log was altered: another project id, an
// earlier seq, another hash) is not forked: VerifyFailed naming both,
// hint awr verify, nothing written.
func TestFork_OriginNotHead(t *testing.T) {
	t.Parallel()
	for name, alter := range map[string]func(o *events.Origin){
		"ProjectID": func(o *events.Origin) { o.ProjectID = "01M8SOTHERPR0JECT000000000" },
		"Seq":       func(o *events.Origin) { o.HeadSeq-- },
		"Hash":      func(o *events.Origin) { o.HeadHash = strings.Repeat("ab", 32) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			te := newTestEnv(t)
			_, head := replicaOf(t, te, alter)
			_, err := commands.Fork(ctx, te.Env, commands.ForkRequest{Accept: true, Agent: "auditor"})
			require.Equal(t, fault.VerifyFailed, fault.As(err).Code, "%v", err)
			require.Equal(t, "awr verify", fault.As(err).Hint)
			require.Contains(t, err.Error(), "is not this log's head")
			require.Contains(t, err.Error(), "nothing was written")
			after, err := te.Store.Head(ctx)
			require.NoError(t, err)
			require.Equal(t, head.Revision, after.Revision, "nothing was written")
		})
	}
}
