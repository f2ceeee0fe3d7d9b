// Package cursor encodes and checks the cursors of awr's listing reads:
// the place of a page's last item (EncodePlace, DecodePlace) or its id
// (EncodeID, DecodeID), opaque to the caller and refused, naming
// --cursor, when awr did not give it.
package cursor

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
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
func EncodePlace(p projections.Place) string { return encodeJSON(p) }

// encodeJSON encodes v, a place in a list, as an opaque cursor.
func encodeJSON(v any) string {
	raw, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// decodeJSON decodes a cursor encodeJSON gave into v; strict refuses a
// field v does not have.
func decodeJSON(cursor string, v any, strict bool) error {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return err
	}
	if !strict {
		return json.Unmarshal(raw, v)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// DecodePlace decodes a cursor of op's ("" is the first page); hint is the
// command that starts over.
// Errors: InvalidInput naming --cursor for a cursor awr did not give.
func DecodePlace(op, cursor, hint string) (*projections.Place, error) {
	if cursor == "" {
		return nil, nil
	}
	var p projections.Place
	if err := decodeJSON(cursor, &p, false); err != nil || p.Key == "" {
		return nil, badCursor(op, "--cursor", cursor, hint)
	}
	return &p, nil
}

// badCursor is the error of a cursor awr did not give, passed as flag.
func badCursor(op, flag, cursor, hint string) error {
	shown := cursor
	if len(shown) > 64 {
		shown = shown[:64] + "..."
	}
	return fault.New(fault.InvalidInput, "%s: %s %q is not a cursor awr gave: pass the %s of the page before", op, flag, shown, nextField(flag)).
		With("flag", flag).WithHint("%s", hint)
}

// nextField is the answer's field that gives flag's cursor: next_cursor
// for --cursor, knowledge_next_cursor for --knowledge-cursor.
func nextField(flag string) string {
	list, _ := strings.CutSuffix(strings.TrimPrefix(flag, "--"), "cursor")
	return strings.ReplaceAll(list, "-", "_") + "next_cursor"
}

// encodeTagged encodes text as an opaque cursor of tag's kind.
func encodeTagged(tag, text string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(tag + ":" + text))
}

// decodeTagged returns the text a cursor encodeTagged gave for tag
// carries, and whether it is one.
func decodeTagged(tag, cursor string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	text, ok := strings.CutPrefix(string(raw), tag+":")
	return text, err == nil && ok
}

// EncodeID encodes the id of the last item of a page (a list in a fixed
// order of ids, such as sessions oldest first) as the next page's cursor.
func EncodeID(id string) string { return encodeTagged("id", id) }

// DecodeID decodes a cursor EncodeID gave ("" is the first page).
// Errors: InvalidInput naming --cursor for a cursor awr did not give.
func DecodeID(op, cursor, hint string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	id, ok := decodeTagged("id", cursor)
	if !ok || id == "" {
		return "", badCursor(op, "--cursor", cursor, hint)
	}
	return id, nil
}

// EncodeKnowledge encodes the place of the last item of a page of the
// knowledge in force as the cursor of the next page.
func EncodeKnowledge(p projections.KnowledgePlace) string { return encodeJSON(p) }

// DecodeKnowledge decodes a cursor EncodeKnowledge gave, passed as
// --knowledge-cursor to op ("" is the first page); hint is the command
// that starts over.
// Errors: InvalidInput naming --knowledge-cursor for a cursor awr did
// not give.
func DecodeKnowledge(op, cursor, hint string) (*projections.KnowledgePlace, error) {
	if cursor == "" {
		return nil, nil
	}
	var p projections.KnowledgePlace
	if err := decodeJSON(cursor, &p, true); err != nil || !projections.KnownKind(p.Kind) || p.ID == "" || p.Num < 1 {
		return nil, badCursor(op, "--knowledge-cursor", cursor, hint)
	}
	return &p, nil
}

// EncodeSeq encodes the seq of an entry of a page (a checkpoint's) as
// the cursor of the next page.
func EncodeSeq(seq int64) string { return encodeTagged("seq", strconv.FormatInt(seq, 10)) }

// DecodeSeq decodes a cursor EncodeSeq gave, passed as flag to op (""
// is the first page, 0); hint is the command that starts over.
// Errors: InvalidInput naming flag for a cursor awr did not give.
func DecodeSeq(op, flag, cursor, hint string) (int64, error) {
	if cursor == "" {
		return 0, nil
	}
	n, ok := decodeTagged("seq", cursor)
	seq, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || seq < 1 {
		return 0, badCursor(op, flag, cursor, hint)
	}
	return seq, nil
}

// EncodeClaim encodes the place of the last claim of a page of a
// session's claims as the cursor of the next page.
func EncodeClaim(p projections.ClaimPlace) string { return encodeJSON(p) }

// DecodeClaim decodes a cursor EncodeClaim gave, passed as
// --claims-cursor to op ("" is the first page); hint is the command that
// starts over.
// Errors: InvalidInput naming --claims-cursor for a cursor awr did not
// give.
func DecodeClaim(op, cursor, hint string) (*projections.ClaimPlace, error) {
	if cursor == "" {
		return nil, nil
	}
	var p projections.ClaimPlace
	if err := decodeJSON(cursor, &p, true); err != nil || p.ID == "" || p.Token < 1 {
		return nil, badCursor(op, "--claims-cursor", cursor, hint)
	}
	return &p, nil
}

// EncodeBinding encodes the external session of the last binding of a
// page of a session's bindings as the cursor of the next page.
func EncodeBinding(external string) string { return encodeTagged("binding", external) }

// DecodeBinding decodes a cursor EncodeBinding gave, passed as
// --bindings-cursor to op ("" is the first page); hint is the command
// that starts over.
// Errors: InvalidInput naming --bindings-cursor for a cursor awr did not
// give.
func DecodeBinding(op, cursor, hint string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	key, ok := decodeTagged("binding", cursor)
	if !ok || key == "" {
		return "", badCursor(op, "--bindings-cursor", cursor, hint)
	}
	return key, nil
}
