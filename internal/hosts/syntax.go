package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// SyntaxError is invalid JSON at a position, lines and columns counted from
// 1 (columns in characters).
type SyntaxError struct {
	Line   int
	Column int
	Msg    string
	kind   error // ErrSettingsSyntax or ErrNotJSON
}

// Unwrap returns the class of the error: ErrSettingsSyntax for a settings
// file, ErrNotJSON for a hook payload.
func (e *SyntaxError) Unwrap() error { return e.kind }

// Error returns "line L, column C: msg".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// offsetOf returns the byte offset a decoding error points at, or def.
func offsetOf(err error, def int) int {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read, the offending one included.
		return int(se.Offset) - 1
	}
	return def
}

// position returns the line and column of byte offset off in b.
func position(b []byte, off int) (line, col int) {
	if off < 0 {
		off = 0
	}
	if off > len(b) {
		off = len(b)
	}
	before := b[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, 1 + utf8.RuneCount(before[start:])
}
