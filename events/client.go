package events

// ClientBound ties a host conversation to an awr session (stream
// "client/<external session>"). ExternalSession is the conversation's key:
// "CLIENT:ID" for claude, codex and gemini (the id as the host reports it),
// the "HOST:ID" a generic client gave otherwise.
type ClientBound struct {
	Client          string `json:"client"`
	ExternalSession string `json:"external_session"`
	SessionID       string `json:"session_id"`
	Work            string `json:"work"`
	CheckpointID    string `json:"checkpoint_id,omitempty"`
}

// Kind returns KindClientBound.
func (ClientBound) Kind() Kind { return KindClientBound }
