package secret

import (
	"encoding/json"
	"strconv"
	"strings"
)

// FindJSON returns the first secret in a JSON document's strings, object
// keys included, with the path of the value that holds it
// (`items[2].depends_on[0].key`; the key itself for a key): the check
// every text bound for the log goes through, whatever field carries it.
// raw must be valid JSON (as encoding/json writes it); a document that is
// not is scanned as far as it goes.
func FindJSON(raw []byte) (path string, f Finding, ok bool) {
	type frame struct {
		object  bool
		key     string
		index   int
		wantKey bool
	}
	var stack []frame
	pathOf := func() string {
		var b strings.Builder
		for _, fr := range stack {
			if fr.object {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(fr.key)
			} else {
				b.WriteString("[" + strconv.Itoa(fr.index) + "]")
			}
		}
		return b.String()
	}
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '{':
			stack = append(stack, frame{object: true, wantKey: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].object {
					stack[n-1].wantKey = true
				} else {
					stack[n-1].index++
				}
			}
		case ':':
			if n := len(stack); n > 0 {
				stack[n-1].wantKey = false
			}
		case '"':
			end, escaped := i+1, false
			for end < len(raw) && raw[end] != '"' {
				if raw[end] == '\\' {
					escaped = true
					end++
				}
				end++
			}
			if end > len(raw) {
				end = len(raw)
			}
			s := string(raw[i+1 : min(end, len(raw))])
			if escaped && end < len(raw) {
				var u string
				if json.Unmarshal(raw[i:end+1], &u) == nil {
					s = u
				}
			}
			i = end
			n := len(stack)
			if n > 0 && stack[n-1].object && stack[n-1].wantKey {
				stack[n-1].key = s
			}
			if found, hit := Find(s); hit {
				return pathOf(), found, true
			}
		}
	}
	return "", Finding{}, false
}
