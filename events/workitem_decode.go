package events

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeWorkItem decodes the JSON of one work item, as json.Unmarshal
// would into a zero WorkItem, and in a fraction of its time: a short
// command reads every item of the register (status, ready, a claim's
// readiness), and encoding/json spent most of its time there validating
// the input, then walking the struct by reflection, where each process
// first builds its field tables. The fast path takes the JSON awr itself
// writes: the object's own field names, each once, strings with any
// escape JSON has, integers and booleans where the struct has them. On
// anything else (another spelling of a field, a duplicate, null, a
// number in another form, invalid UTF-8, malformed input) it hands the
// whole input to json.Unmarshal, so the result and the error are always
// what json.Unmarshal gives.
func DecodeWorkItem(data []byte, w *WorkItem) error {
	d := itemDecoder{b: data}
	if d.workItem(w) {
		return nil
	}
	*w = WorkItem{}
	return json.Unmarshal(data, w)
}

// itemDecoder is the fast path's cursor over the input. Each method
// reports false when the input is not of the form it takes.
type itemDecoder struct {
	b []byte
	i int
}

func (d *itemDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next skips white space and consumes c.
func (d *itemDecoder) next(c byte) bool {
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// member moves to the next member of an object whose '{' was consumed
// (first: none read yet) and returns its name, with the cursor on its
// value; done at the closing '}'; bad on anything else, a name with an
// escape included (the slow path matches those).
func (d *itemDecoder) member(first bool) (name []byte, done, bad bool) {
	if d.next('}') {
		return nil, true, false
	}
	if !first && !d.next(',') {
		return nil, false, true
	}
	d.ws()
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false, true
	}
	start := d.i + 1
	end := start
	for end < len(d.b) && d.b[end] != '"' && d.b[end] != '\\' && d.b[end] >= 0x20 {
		end++
	}
	if end >= len(d.b) || d.b[end] != '"' {
		return nil, false, true
	}
	d.i = end + 1
	if !d.next(':') {
		return nil, false, true
	}
	d.ws()
	return d.b[start:end], false, false
}

// once marks member bit as read, false when it already was (a repeat).
func once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// object reads one JSON object, each member's value by field, given the
// member's name with the cursor on its value; field's false, as for a
// name it does not know, is the object's.
func (d *itemDecoder) object(field func(name []byte) bool) bool {
	if !d.next('{') {
		return false
	}
	for first := true; ; first = false {
		name, done, bad := d.member(first)
		switch {
		case bad:
			return false
		case done:
			return true
		case !field(name):
			return false
		}
	}
}

func (d *itemDecoder) workItem(w *WorkItem) bool {
	var seen uint32 // the members read, for once
	ok := d.object(func(name []byte) bool {
		switch string(name) {
		case "key":
			return once(&seen, 1<<0) && d.into(&w.Key)
		case "title":
			return once(&seen, 1<<1) && d.into(&w.Title)
		case "status":
			return once(&seen, 1<<2) && d.into(&w.Status)
		case "raw_status":
			return once(&seen, 1<<3) && d.into(&w.RawStatus)
		case "kind":
			return once(&seen, 1<<4) && d.into(&w.Kind)
		case "priority":
			return once(&seen, 1<<5) && d.into(&w.Priority)
		case "summary":
			return once(&seen, 1<<6) && d.into(&w.Summary)
		case "next_action":
			return once(&seen, 1<<7) && d.into(&w.NextAction)
		case "blocker":
			return once(&seen, 1<<8) && d.into(&w.Blocker)
		case "acceptance":
			return once(&seen, 1<<9) && d.strs(&w.Acceptance)
		case "depends_on":
			return once(&seen, 1<<10) && d.deps(&w.DependsOn)
		case "goal":
			return once(&seen, 1<<11) && d.into(&w.Goal)
		case "milestone":
			return once(&seen, 1<<12) && d.into(&w.Milestone)
		case "owner":
			return once(&seen, 1<<13) && d.into(&w.Owner)
		case "tags":
			return once(&seen, 1<<14) && d.strs(&w.Tags)
		case "paths":
			return once(&seen, 1<<15) && d.strs(&w.Paths)
		case "source":
			return once(&seen, 1<<16) && d.sourceRef(&w.Source)
		}
		return false
	})
	d.ws()
	return ok && d.i == len(d.b)
}

func (d *itemDecoder) sourceRef(s *SourceRef) bool {
	var seen uint32
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "path":
			return once(&seen, 1) && d.into(&s.Path)
		case "line_start":
			return once(&seen, 2) && d.int(&s.LineStart)
		case "line_end":
			return once(&seen, 4) && d.int(&s.LineEnd)
		case "content_hash":
			return once(&seen, 8) && d.into(&s.ContentHash)
		}
		return false
	})
}

func (d *itemDecoder) dependency(dep *Dependency) bool {
	var seen uint32
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "key":
			return once(&seen, 1) && d.into(&dep.Key)
		case "required":
			return once(&seen, 2) && d.bool(&dep.Required)
		}
		return false
	})
}

// array reads a JSON array into out, each element with elem (the cursor
// before it); elem's false, as for an element it cannot read, is the
// array's, and out is then left as it was.
func array[T any](d *itemDecoder, out *[]T, elem func() (T, bool)) bool {
	if !d.next('[') {
		return false
	}
	list := []T{}
	if !d.next(']') {
		for {
			v, ok := elem()
			if !ok {
				return false
			}
			list = append(list, v)
			if d.next(',') {
				continue
			}
			if !d.next(']') {
				return false
			}
			break
		}
	}
	*out = list
	return true
}

func (d *itemDecoder) deps(out *[]Dependency) bool {
	return array(d, out, func() (dep Dependency, ok bool) {
		ok = d.dependency(&dep)
		return dep, ok
	})
}

func (d *itemDecoder) strs(out *[]string) bool {
	return array(d, out, func() (string, bool) {
		d.ws()
		return d.str()
	})
}

func (d *itemDecoder) into(s *string) bool {
	v, ok := d.str()
	*s = v
	return ok
}

func (d *itemDecoder) bool(v *bool) bool {
	rest := d.b[d.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		*v, d.i = true, d.i+4
	case len(rest) >= 5 && string(rest[:5]) == "false":
		*v, d.i = false, d.i+5
	default:
		return false
	}
	return d.end()
}

// int takes an integer in JSON's plainest form: an optional minus, then
// 0 or digits not starting with 0, that fits an int.
func (d *itemDecoder) int(v *int) bool {
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	n := d.i - digits
	if n == 0 || (n > 1 && d.b[digits] == '0') || !d.end() {
		return false
	}
	if n > 18 { // it may not fit: strconv decides, as for encoding/json
		x, err := strconv.ParseInt(string(d.b[start:d.i]), 10, strconv.IntSize)
		*v = int(x)
		return err == nil
	}
	var x int64 // at most 18 digits: no overflow
	for _, c := range d.b[digits:d.i] {
		x = x*10 + int64(c-'0')
	}
	if digits > start {
		x = -x
	}
	if int64(int(x)) != x {
		return false
	}
	*v = int(x)
	return true
}

// end reports whether a literal or number stops where it should: at
// white space, a comma or a closing bracket, or at the end.
func (d *itemDecoder) end() bool {
	if d.i == len(d.b) {
		return true
	}
	switch d.b[d.i] {
	case ' ', '\t', '\n', '\r', ',', '}', ']':
		return true
	}
	return false
}

// str takes a string whose '"' is next. Valid UTF-8 is kept as it is;
// the escapes are JSON's, with \u surrogates only in valid pairs (a lone
// one, which encoding/json turns into U+FFFD, goes to the slow path).
func (d *itemDecoder) str() (string, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", false
	}
	d.i++
	start := d.i
	ascii := true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			seg := d.b[start:d.i]
			d.i++
			if !ascii && !utf8.Valid(seg) {
				return "", false
			}
			return string(seg), true
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		d.i++
	}
	return "", false
}

// escaped finishes a string from its first backslash, at d.i.
func (d *itemDecoder) escaped(start int) (string, bool) {
	out := make([]byte, 0, d.i-start+16)
	out = append(out, d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			if !utf8.Valid(out) {
				return "", false
			}
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			return "", false
		}
		e := d.b[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				if d.i+1 >= len(d.b) || d.b[d.i] != '\\' || d.b[d.i+1] != 'u' {
					return "", false
				}
				d.i += 2
				r2, ok := d.hex4()
				if !ok {
					return "", false
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", false
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (d *itemDecoder) hex4() (rune, bool) {
	if d.i+4 > len(d.b) {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.i += 4
	return r, true
}
