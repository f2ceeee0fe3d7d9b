package events

import (
	"encoding/json"
	"errors"
	"sort"
)

// errNotCompact makes canonicalCompact give up; the caller falls back to
// CanonicalJSON.
var errNotCompact = errors.New("not compact JSON")

// canonicalCompact returns the canonical form of doc, a compact JSON
// document as encoding/json's Marshal writes it (no insignificant
// whitespace), without building a tree of Go values: numbers, literals and
// strings without escapes are copied as they are, strings with escapes are
// re-encoded as the canonical encoder writes them (no HTML escaping), and
// object members are sorted by key. It is the fast path of MarshalPayload;
// anything it does not expect (whitespace, malformed input) gives
// errNotCompact. FuzzCanonicalCompact checks it against CanonicalJSON.
func canonicalCompact(doc []byte) ([]byte, error) {
	out := make([]byte, 0, len(doc))
	out, rest, err := canonValue(out, doc)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, errNotCompact
	}
	return out, nil
}

func canonValue(dst, src []byte) ([]byte, []byte, error) {
	if len(src) == 0 {
		return nil, nil, errNotCompact
	}
	switch c := src[0]; {
	case c == '{':
		return canonObject(dst, src)
	case c == '[':
		return canonArray(dst, src)
	case c == '"':
		tok, rest, err := stringToken(src)
		if err != nil {
			return nil, nil, err
		}
		dst, err = appendJSONString(dst, tok)
		return dst, rest, err
	default:
		// A number or a literal: up to the next delimiter, copied as it is
		// (CanonicalJSON keeps numbers exactly as written).
		i := 0
		for i < len(src) && src[i] != ',' && src[i] != '}' && src[i] != ']' {
			switch src[i] {
			case ' ', '\t', '\n', '\r', '"', '{', '[', ':':
				return nil, nil, errNotCompact
			}
			i++
		}
		if i == 0 || !json.Valid(src[:i]) {
			return nil, nil, errNotCompact
		}
		return append(dst, src[:i]...), src[i:], nil
	}
}

// stringToken splits a JSON string token off src.
func stringToken(src []byte) (tok, rest []byte, err error) {
	for i := 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '"':
			return src[:i+1], src[i+1:], nil
		}
	}
	return nil, nil, errNotCompact
}

// plainString returns the value of a string token that holds only
// printable ASCII and no escapes.
func plainString(tok []byte) (string, bool) {
	for _, c := range tok[1 : len(tok)-1] {
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return "", false
		}
	}
	return string(tok[1 : len(tok)-1]), true
}

// appendJSONString writes a string token canonically: verbatim without
// escapes, decoded and re-encoded (no HTML escaping) with them.
func appendJSONString(dst, tok []byte) ([]byte, error) {
	if _, ok := plainString(tok); ok {
		return append(dst, tok...), nil
	}
	return stringSlow(dst, tok)
}

func stringSlow(dst, tok []byte) ([]byte, error) {
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return nil, errNotCompact
	}
	b, err := EncodeJSON(s)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

type member struct {
	key   string
	value []byte // the canonical "key":value bytes
}

func canonObject(dst, src []byte) ([]byte, []byte, error) {
	src = src[1:]
	var members []member
	if len(src) > 0 && src[0] == '}' {
		return append(dst, '{', '}'), src[1:], nil
	}
	for {
		if len(src) == 0 || src[0] != '"' {
			return nil, nil, errNotCompact
		}
		tok, rest, err := stringToken(src)
		if err != nil {
			return nil, nil, err
		}
		key, ok := plainString(tok)
		if !ok {
			if err := json.Unmarshal(tok, &key); err != nil {
				return nil, nil, errNotCompact
			}
		}
		if len(rest) == 0 || rest[0] != ':' {
			return nil, nil, errNotCompact
		}
		m, err := appendJSONString(nil, tok)
		if err != nil {
			return nil, nil, err
		}
		m = append(m, ':')
		if m, rest, err = canonValue(m, rest[1:]); err != nil {
			return nil, nil, err
		}
		members = append(members, member{key: key, value: m})
		if len(rest) == 0 {
			return nil, nil, errNotCompact
		}
		switch rest[0] {
		case ',':
			src = rest[1:]
			continue
		case '}':
			src = rest[1:]
		default:
			return nil, nil, errNotCompact
		}
		break
	}
	sort.SliceStable(members, func(i, j int) bool { return members[i].key < members[j].key })
	for i := 1; i < len(members); i++ {
		if members[i].key == members[i-1].key {
			// Duplicate keys: the decoder keeps the last one; leave that
			// to the general path.
			return nil, nil, errNotCompact
		}
	}
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m.value...)
	}
	return append(dst, '}'), src, nil
}

func canonArray(dst, src []byte) ([]byte, []byte, error) {
	src = src[1:]
	dst = append(dst, '[')
	if len(src) > 0 && src[0] == ']' {
		return append(dst, ']'), src[1:], nil
	}
	for {
		var err error
		if dst, src, err = canonValue(dst, src); err != nil {
			return nil, nil, err
		}
		if len(src) == 0 {
			return nil, nil, errNotCompact
		}
		switch src[0] {
		case ',':
			dst = append(dst, ',')
			src = src[1:]
			continue
		case ']':
			return append(dst, ']'), src[1:], nil
		}
		return nil, nil, errNotCompact
	}
}
