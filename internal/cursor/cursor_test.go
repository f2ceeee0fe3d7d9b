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
