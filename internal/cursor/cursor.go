// Package cursor encodes and checks the cursors of awr's listing reads:
// the place of a page's last item (EncodePlace, DecodePlace) or its id
// (EncodeID, DecodeID), opaque to the caller and refused, naming
// --cursor, when awr did not give it.
package cursor

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// A listing read returns one page by default (commands.DefaultPage, or
// --limit N): the answer counts every item (a *_total field) and, when
// more follow, gives next_cursor, the --cursor of the next page; --all
// asks for everything. The reads ordered by seq (log, work history) page
// with next_since, the --since of the next page, in the same way.

// EncodePlace encodes the place of the last item of a page as the cursor
// of the next: opaque to the caller, checked when it comes back.
func EncodePlace(p projections.Place) string {
	raw, _ := json.Marshal(p)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// DecodePlace decodes a cursor of op's ("" is the first page); hint is the
// command that starts over.
// Errors: InvalidInput naming --cursor for a cursor awr did not give.
func DecodePlace(op, cursor, hint string) (*projections.Place, error) {
	if cursor == "" {
		return nil, nil
	}
	var p projections.Place
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err == nil {
		err = json.Unmarshal(raw, &p)
	}
	if err != nil || p.Key == "" {
		return nil, badCursor(op, cursor, hint)
	}
	return &p, nil
}

// badCursor is the error of a cursor awr did not give.
func badCursor(op, cursor, hint string) error {
	shown := cursor
	if len(shown) > 64 {
		shown = shown[:64] + "..."
	}
	return fault.New(fault.InvalidInput, "%s: --cursor %q is not a cursor awr gave: pass the next_cursor of the page before", op, shown).
		With("flag", "--cursor").WithHint("%s", hint)
}

// EncodeID encodes the id of the last item of a page (a list in a fixed
// order of ids, such as sessions oldest first) as the next page's cursor.
func EncodeID(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("id:" + id))
}

// DecodeID decodes a cursor EncodeID gave ("" is the first page).
// Errors: InvalidInput naming --cursor for a cursor awr did not give.
func DecodeID(op, cursor, hint string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	id, ok := strings.CutPrefix(string(raw), "id:")
	if err != nil || !ok || id == "" {
		return "", badCursor(op, cursor, hint)
	}
	return id, nil
}
