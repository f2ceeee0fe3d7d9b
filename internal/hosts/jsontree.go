package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// node is a JSON value that keeps the order of object members, so a
// settings file is rewritten with its keys where they were.
type node struct {
	kind    byte // '{' object, '[' array, 0 scalar
	members []member
	items   []*node
	raw     string // a scalar's JSON text
}

type member struct {
	key string
	val *node
}

// parseTree decodes b, which must be valid JSON, into a node.
func parseTree(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the value")
	}
	return n, nil
}

func parseNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: '{'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				v, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, member{key: key, val: v})
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: '['}
			for dec.More() {
				v, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return str(t), nil
	case json.Number:
		return &node{raw: string(t)}, nil
	case bool:
		return &node{raw: fmt.Sprint(t)}, nil
	case nil:
		return &node{raw: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// str returns a string scalar.
func str(s string) *node {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return &node{raw: strings.TrimSuffix(b.String(), "\n")}
}

// num returns an integer scalar.
func num(i int) *node { return &node{raw: fmt.Sprint(i)} }

// object returns an object of the given members, in order.
func object(members ...member) *node { return &node{kind: '{', members: members} }

// get returns the value of the last member named key (as JSON readers keep
// the last of duplicate keys), or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

// text returns a string scalar's value; ok is false for any other node.
func (n *node) text() (string, bool) {
	if n == nil || n.kind != 0 || !strings.HasPrefix(n.raw, `"`) {
		return "", false
	}
	var s string
	if json.Unmarshal([]byte(n.raw), &s) != nil {
		return "", false
	}
	return s, true
}

// set replaces the last member named key, or appends one.
func (n *node) set(key string, v *node) {
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			n.members[i].val = v
			return
		}
	}
	n.members = append(n.members, member{key: key, val: v})
}

// remove deletes every member named key.
func (n *node) remove(key string) {
	kept := n.members[:0]
	for _, m := range n.members {
		if m.key != key {
			kept = append(kept, m)
		}
	}
	n.members = kept
}

// compact returns n as JSON without blanks, for comparisons.
func (n *node) compact() string {
	var b strings.Builder
	n.write(&b, "", "", 0)
	return b.String()
}

// encode returns n as indented JSON ending with a newline; newline is "\n"
// or "\r\n".
func (n *node) encode(indent, newline string) []byte {
	var b strings.Builder
	n.write(&b, indent, newline, 0)
	b.WriteString(newline)
	return []byte(b.String())
}

func (n *node) write(b *strings.Builder, indent, nl string, depth int) {
	pad := func(d int) {
		b.WriteString(nl)
		for i := 0; i < d; i++ {
			b.WriteString(indent)
		}
	}
	colon := ":"
	if nl != "" {
		colon = ": "
	}
	// block writes count entries (each writes entry i) between open and
	// close, one a line at depth+1.
	block := func(open, close string, count int, each func(i int)) {
		if count == 0 {
			b.WriteString(open + close)
			return
		}
		b.WriteString(open)
		for i := range count {
			if i > 0 {
				b.WriteString(",")
			}
			pad(depth + 1)
			each(i)
		}
		pad(depth)
		b.WriteString(close)
	}
	switch n.kind {
	case '{':
		block("{", "}", len(n.members), func(i int) {
			m := n.members[i]
			b.WriteString(str(m.key).raw)
			b.WriteString(colon)
			m.val.write(b, indent, nl, depth+1)
		})
	case '[':
		block("[", "]", len(n.items), func(i int) { n.items[i].write(b, indent, nl, depth+1) })
	default:
		b.WriteString(n.raw)
	}
}

// detectIndent returns the indentation unit of a JSON text: the leading
// blanks of its first indented line, two spaces when there is none.
func detectIndent(b []byte) string {
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		trimmed := bytes.TrimLeft(line, " \t")
		if len(trimmed) == 0 || len(trimmed) == len(line) {
			continue
		}
		lead := string(line[:len(line)-len(trimmed)])
		if strings.Trim(lead, " ") == "" || strings.Trim(lead, "\t") == "" {
			return lead
		}
		break
	}
	return "  "
}
