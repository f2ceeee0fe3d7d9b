package mcpserver

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
)

// output is a tool's output: its outputSchema and how a result is shaped
// to it.
//
// The schema is that of Out, the result type the CLI prints with --json,
// with no union with null anywhere: a Go pointer, slice or map the CLI
// writes as null is, in a tool's structured content, an empty array (a
// slice) or an absent field (anything else), and only those fields are
// optional. A client reads one type per field.
type output struct {
	schema *jsonschema.Schema
	shape  *shape
}

// shape says where a result's encoding needs changing: the properties
// whose null is left out (drop) or written [] (empty), and the shapes of
// nested objects and array items. A nil shape changes nothing.
type shape struct {
	drop, empty map[string]bool
	props       map[string]*shape
	items       *shape
	values      *shape // a map's values
}

// outputOf derives Out's output. It panics when Out has no schema: a
// registration fault, caught by every test that starts a server.
func outputOf[Out any](name string) output {
	schema, err := jsonschema.For[Out](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		panic("mcpserver: output schema for " + name + ": " + err.Error())
	}
	sh := noNull(schema)
	if _, err := schema.Resolve(nil); err != nil {
		panic("mcpserver: resolve output schema for " + name + ": " + err.Error())
	}
	return output{schema: schema, shape: sh}
}

// noNull removes null from every type list under s and makes the
// properties that could be null (pointers, slices, maps) optional (arrays stay required: they are
// written [] instead), returning the shape that encodes a result so.
func noNull(s *jsonschema.Schema) *shape {
	if s == nil {
		return nil
	}
	var sh shape
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, name := range keys {
		p := s.Properties[name]
		if (notNull(p) || isMap(p)) && slices.Contains(s.Required, name) {
			if p.Type == "array" {
				set(&sh.empty, name)
			} else {
				set(&sh.drop, name)
				s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
			}
		}
		if sub := noNull(p); sub != nil {
			if sh.props == nil {
				sh.props = map[string]*shape{}
			}
			sh.props[name] = sub
		}
	}
	if s.Items != nil {
		notNull(s.Items)
		sh.items = noNull(s.Items)
	}
	if ap := s.AdditionalProperties; ap != nil {
		notNull(ap)
		sh.values = noNull(ap)
	}
	if sh.drop == nil && sh.empty == nil && sh.props == nil && sh.items == nil && sh.values == nil {
		return nil
	}
	return &sh
}

func set(m *map[string]bool, k string) {
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[k] = true
}

// isMap reports whether s is the schema of a Go map, which encoding/json
// writes null when nil although jsonschema.For gives it type object.
func isMap(s *jsonschema.Schema) bool {
	return s.Type == "object" && s.Properties == nil && s.AdditionalProperties != nil && s.AdditionalProperties.Not == nil
}

// notNull drops "null" from s's types and reports whether it was there.
func notNull(s *jsonschema.Schema) bool {
	i := slices.Index(s.Types, "null")
	if i < 0 {
		return false
	}
	types := slices.Delete(slices.Clone(s.Types), i, i+1)
	if len(types) == 1 {
		s.Type, s.Types = types[0], nil
	} else {
		s.Types = types
	}
	return true
}

// reshape rewrites b, one JSON value encoded as the CLI does, to sh: the
// bytes of every part sh does not touch are kept as they are, key order
// included.
func reshape(b []byte, sh *shape) ([]byte, error) {
	// Only a null is ever changed: a result without one is kept as it is,
	// unread (most are, and a status of 150 items is 10 KB to walk).
	if sh == nil || !bytes.Contains(b, []byte("null")) {
		return b, nil
	}
	var out bytes.Buffer
	if err := reshapeInto(&out, b, sh); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func reshapeInto(out *bytes.Buffer, b []byte, sh *shape) error {
	b = bytes.TrimSpace(b)
	if sh == nil || len(b) == 0 || (b[0] != '{' && b[0] != '[') {
		out.Write(b)
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return err
	}
	if b[0] == '[' {
		out.WriteByte('[')
		for i := 0; dec.More(); i++ {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			if i > 0 {
				out.WriteByte(',')
			}
			if err := reshapeInto(out, raw, sh.items); err != nil {
				return err
			}
		}
		out.WriteByte(']')
		return nil
	}
	out.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		isNull := string(raw) == "null"
		if isNull && sh.drop[key] {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		kb, err := marshal(key)
		if err != nil {
			return err
		}
		out.Write(kb)
		out.WriteByte(':')
		if isNull && sh.empty[key] {
			out.WriteString("[]")
			continue
		}
		sub, ok := sh.props[key]
		if !ok {
			sub = sh.values
		}
		if err := reshapeInto(out, raw, sub); err != nil {
			return err
		}
	}
	out.WriteByte('}')
	return nil
}
