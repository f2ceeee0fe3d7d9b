package fault

import "github.com/awr-dev/awr/internal/secret"

// Object is the one shape an error takes on the wire: the JSON object the
// CLI prints on stderr with --json and the text of an MCP tool error. Details is never null.
type Object struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
	Hint    string         `json:"hint"`
}

// ObjectOf returns err's wire shape; an uncoded error is Internal. It
// is what every front end shows of an error (the CLI, the MCP server, the
// web page), so it is where an error that quotes its input (a work key
// that was not found, a flag value the parser refused) stops quoting a
// secret: every credential in the message, the hint and the string
// details is replaced by "[withheld: KIND]" (secret.Redact).
func ObjectOf(err error) Object {
	e := As(err)
	o := Object{Code: e.Code, Message: secret.Redact(e.Message), Details: map[string]any{}, Hint: secret.Redact(e.Hint)}
	for k, v := range e.Details {
		switch x := v.(type) {
		case string:
			v = secret.Redact(x)
		case []string:
			r := make([]string, len(x))
			for i, s := range x {
				r[i] = secret.Redact(s)
			}
			v = r
		}
		o.Details[k] = v
	}
	return o
}
