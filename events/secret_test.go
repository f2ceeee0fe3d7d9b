package events_test

import (
	"context"
	"math/rand"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

// Every event passes one secret check before it is sealed: a credential
// in any string of its payload (keys of maps too), its stream, its id, its
// actor or the write's request id is refused with RuleViolation naming
// the field's path and the kind, never the secret, and nothing is
// appended. A request id is at most 200 bytes of one line.
func TestAppend_SecretsAndRequestIDs(t *testing.T) {
	tok := "npm_" + strings.Repeat("Zq9", 12)
	rng := rand.New(rand.NewSource(3))
	appendWith := func(st *events.Store, o events.WriteOptions, ne events.NewEvent) error {
		_, err := st.Write(context.Background(), o, func(tx *events.Tx) (any, error) {
			_, err := tx.Append(ne)
			return nil, err
		})
		return err
	}
	started := func(id, work string) events.NewEvent {
		return events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{SessionID: id, Work: work, Agent: "a"}}
	}
	withRequest := func(id string) events.WriteOptions {
		o := opts(rng)
		o.RequestID, o.Fingerprint = id, "f"
		return o
	}
	t.Run("ErrSecret", func(t *testing.T) {
		st, _ := openStore(t)
		for _, tc := range []struct {
			field string
			o     events.WriteOptions
			ne    events.NewEvent
		}{
			{"payload.work", opts(rng), started("s1", "T-"+tok)},
			{"payload.items[0].depends_on[0].key", opts(rng), events.NewEvent{Stream: "source/TODO.md", Payload: events.SourceIndexed{Path: "TODO.md",
				Items: []events.WorkItem{{Key: "T-1", Title: "t", DependsOn: []events.Dependency{{Key: tok}}}}}}},
			{"payload.path", opts(rng), events.NewEvent{Stream: "source/x", Payload: events.SourceIndexed{Path: tok + ".md"}}},
			{"stream", opts(rng), events.NewEvent{Stream: "session/" + tok, Payload: events.SessionStarted{SessionID: "s2", Work: "W", Agent: "a"}}},
			{"request_id", withRequest(tok), started("s3", "W")},
			{"actor", events.WriteOptions{Now: t0, Entropy: rng, Actor: "ci " + tok}, started("s4", "W")},
		} {
			err := appendWith(st, tc.o, tc.ne)
			require.True(t, fault.Is(err, fault.RuleViolation), "%s: %v", tc.field, err)
			require.Equal(t, tc.field, fault.As(err).Details["field"])
			require.Equal(t, "npm token", fault.As(err).Details["kind"])
			require.NotContains(t, fault.As(err).Message, tok[4:])
		}
		h, err := st.Head(context.Background())
		require.NoError(t, err)
		require.Zero(t, h.Revision, "nothing appended")
	})
	t.Run("ErrRequestIDBounds", func(t *testing.T) {
		st, _ := openStore(t)
		err := appendWith(st, withRequest(strings.Repeat("r", events.MaxRequestIDBytes+1)), started("s1", "W"))
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
		require.Equal(t, "--request-id", fault.As(err).Details["flag"])
		require.NotContains(t, fault.As(err).Message, "rrrr")
		err = appendWith(st, withRequest("a\x1b[2Jb"), started("s1", "W"))
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
		require.NoError(t, appendWith(st, withRequest(strings.Repeat("r", events.MaxRequestIDBytes)), started("s1", "W")))
	})
}
