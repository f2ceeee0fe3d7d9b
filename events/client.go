package events

// ClientBound ties a host conversation (external session "HOST:ID") to an awr
// session (stream "client/<external session>").
type ClientBound struct {
	Client          string `json:"client"`
	ExternalSession string `json:"external_session"`
	SessionID       string `json:"session_id"`
	Work            string `json:"work"`
	CheckpointID    string `json:"checkpoint_id,omitempty"`
}

// Kind returns KindClientBound.
func (ClientBound) Kind() Kind { return KindClientBound }
