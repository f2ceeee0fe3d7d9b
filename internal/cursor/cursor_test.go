package cursor_test

import (
	"testing"

	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestCursor_RoundTrip: a place or an id comes back from its cursor as
// it went in; "" is the first page.
func TestCursor_RoundTrip(t *testing.T) {
	t.Parallel()
	place := projections.Place{Key: "W-7"}
	got, err := cursor.DecodePlace("ready", cursor.EncodePlace(place), "awr ready")
	require.NoError(t, err)
	require.Equal(t, &place, got)
	id, err := cursor.DecodeID("session list", cursor.EncodeID("01ABC"), "awr session list")
	require.NoError(t, err)
	require.Equal(t, "01ABC", id)
	none, err := cursor.DecodePlace("ready", "", "awr ready")
	require.NoError(t, err)
	require.Nil(t, none)
	noID, err := cursor.DecodeID("session list", "", "awr session list")
	require.NoError(t, err)
	require.Empty(t, noID)
}

// TestCursor_NotGiven: a cursor awr did not give is InvalidInput naming
// --cursor, with the command that starts over as its hint, whichever
// kind of cursor it is taken for.
func TestCursor_NotGiven(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, cursor string
		decode       func(op, cursor, hint string) error
	}{
		{"place from junk", "not-a-cursor", func(op, c, h string) error { _, err := cursor.DecodePlace(op, c, h); return err }},
		{"place from an id cursor", cursor.EncodeID("01ABC"), func(op, c, h string) error { _, err := cursor.DecodePlace(op, c, h); return err }},
		{"id from junk", "not-a-cursor", func(op, c, h string) error { _, err := cursor.DecodeID(op, c, h); return err }},
		{"id from a place cursor", cursor.EncodePlace(projections.Place{Key: "W-1"}), func(op, c, h string) error { _, err := cursor.DecodeID(op, c, h); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			fe := fault.As(c.decode("ready", c.cursor, "awr ready"))
			require.NotNil(t, fe)
			require.Equal(t, fault.InvalidInput, fe.Code)
			require.Equal(t, "--cursor", fe.Details["flag"])
			require.Equal(t, "awr ready", fe.Hint)
			require.Contains(t, fe.Message, "is not a cursor awr gave")
		})
	}
}

// TestCursor_KnowledgeAndSeq: a place in the knowledge in force and a
// seq come back from their cursors; a cursor awr did not give, or one of
// another list, is InvalidInput naming the flag it came in, and the
// message names the field that gives it.
func TestCursor_KnowledgeAndSeq(t *testing.T) {
	t.Parallel()
	place := projections.KnowledgePlace{Kind: "fact", Num: 2, ID: "H-2"}
	got, err := cursor.DecodeKnowledge("work show", cursor.EncodeKnowledge(place), "awr work show W-1")
	require.NoError(t, err)
	require.Equal(t, &place, got)
	seq, err := cursor.DecodeSeq("session show", "--checkpoints-cursor", cursor.EncodeSeq(42), "awr session show S")
	require.NoError(t, err)
	require.EqualValues(t, 42, seq)
	none, err := cursor.DecodeKnowledge("work show", "", "awr work show W-1")
	require.NoError(t, err)
	require.Nil(t, none)

	for _, c := range []struct {
		name, cursor, flag, field string
		decode                    func(c string) error
	}{
		{"knowledge from junk", "L-1", "--knowledge-cursor", "knowledge_next_cursor", func(c string) error {
			_, err := cursor.DecodeKnowledge("work show", c, "awr work show W-1")
			return err
		}},
		{"knowledge from a ready cursor", cursor.EncodePlace(projections.Place{Key: "W-1"}), "--knowledge-cursor", "knowledge_next_cursor", func(c string) error {
			_, err := cursor.DecodeKnowledge("work show", c, "awr work show W-1")
			return err
		}},
		{"knowledge of no kind", cursor.EncodeKnowledge(projections.KnowledgePlace{Kind: "rumour", Num: 1, ID: "R-1"}), "--knowledge-cursor", "knowledge_next_cursor", func(c string) error {
			_, err := cursor.DecodeKnowledge("work show", c, "awr work show W-1")
			return err
		}},
		{"seq from a knowledge cursor", cursor.EncodeKnowledge(place), "--evidence-cursor", "evidence_next_cursor", func(c string) error {
			_, err := cursor.DecodeSeq("work show", "--evidence-cursor", c, "awr work show W-1")
			return err
		}},
		{"seq from an id cursor", cursor.EncodeID("01ABC"), "--checkpoints-cursor", "checkpoints_next_cursor", func(c string) error {
			_, err := cursor.DecodeSeq("work show", "--checkpoints-cursor", c, "awr work show W-1")
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fe := fault.As(c.decode(c.cursor))
			require.NotNil(t, fe)
			require.Equal(t, fault.InvalidInput, fe.Code)
			require.Equal(t, c.flag, fe.Details["flag"])
			require.Equal(t, "awr work show W-1", fe.Hint)
			require.Contains(t, fe.Message, "pass the "+c.field)
		})
	}
}
