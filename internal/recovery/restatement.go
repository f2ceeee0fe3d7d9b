package recovery

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/internal/fault"
)

// DecodeRestatement strictly decodes raw, a successor's restatement of
// its handoff (`awr recovery verify --input`) read from name: one JSON
// object of commands.Restatement's fields, and nothing else.
// Errors: InvalidInput naming name and the line for malformed JSON or an
// unknown field, and for more than one JSON value.
func DecodeRestatement(name string, raw []byte) (*commands.Restatement, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var rs commands.Restatement
	if err := dec.Decode(&rs); err != nil {
		line := 1 + bytes.Count(raw[:min(int(dec.InputOffset()), len(raw))], []byte("\n"))
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line = 1 + bytes.Count(raw[:min(int(se.Offset), len(raw))], []byte("\n"))
		}
		return nil, fault.New(fault.InvalidInput, "recovery verify: %s:%d: %v", name, line, err).With("path", name).With("line", line).
			WithHint("awr recovery verify --help")
	}
	if dec.More() {
		return nil, fault.New(fault.InvalidInput, "recovery verify: %s: more than one JSON value", name).With("path", name)
	}
	return &rs, nil
}
