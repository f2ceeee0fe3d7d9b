package fault

// Object is the one shape an error takes on the wire: the JSON object the
// CLI prints on stderr with --json and the structured content of an MCP
// tool error. Details is never null.
type Object struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
	Hint    string         `json:"hint"`
}

// ObjectOf returns err's wire shape; an uncoded error is Internal.
func ObjectOf(err error) Object {
	e := As(err)
	o := Object{Code: e.Code, Message: e.Message, Details: e.Details, Hint: e.Hint}
	if o.Details == nil {
		o.Details = map[string]any{}
	}
	return o
}
