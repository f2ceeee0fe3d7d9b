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
	// ContinuesFrom is the key of the conversation this one continues: a
	// host that cleared or switched its conversation gave it a new id, and
	// the hook bound the new one where the old one was.
	ContinuesFrom string `json:"continues_from,omitempty"`
	// Fork is true when the conversation is a fork of ContinuesFrom (a
	// copy under a new id, as claude --fork-session makes): both go on,
	// bound to the same session, and the original's binding is untouched.
	Fork bool `json:"fork,omitempty"`
}

// Kind returns KindClientBound.
func (ClientBound) Kind() Kind { return KindClientBound }

// HostEventRecorded records one hook delivery of a host for a bound
// conversation (stream "client/<key>", the binding's): the host compacted
// the conversation, it stopped a turn, the conversation started or ended.
// It never changes the awr session: a conversation that ends leaves its
// session running and its claim held. Delivery identifies the occurrence
// (hosts.Event.Key), so a delivery seen twice is recorded once.
type HostEventRecorded struct {
	Client          string `json:"client"`
	ExternalSession string `json:"external_session"`
	SessionID       string `json:"session_id"`
	Work            string `json:"work"`
	// Event is awr's name for it (session_start, before_agent,
	// pre_compact, stop, session_end); HostEvent, the host's.
	Event          string `json:"event"`
	HostEvent      string `json:"host_event"`
	Source         string `json:"source,omitempty"`
	Trigger        string `json:"trigger,omitempty"`
	Reason         string `json:"reason,omitempty"`
	StopHookActive bool   `json:"stop_hook_active,omitempty"`
	Delivery       string `json:"delivery"`
	// Answer is what awr answered: "context" (the packet, ContextHash),
	// "delta" (what changed since the packet the conversation holds),
	// "held" (nothing: the packet it holds is still current), "deferred"
	// (nothing at a start: the context goes with the next prompt, where
	// the host keeps it), "block" (the host was asked to continue the
	// turn), "reminder", or "" (nothing).
	Answer      string `json:"answer,omitempty"`
	ContextHash string `json:"context_hash,omitempty"`
	// Lines, for a context or delta answer, are the digests of the lines
	// of the packet the conversation holds from then on (LineDigest), so
	// that a later start of the same conversation sends only what
	// changed.
	Lines []string `json:"lines,omitempty"`
	// Process is the host process that ran the hook (the nearest
	// ancestor of the hook's process that is not a shell), when it could
	// be read: a Codex thread cleared in its TUI goes on in a new thread
	// of the same process, which no hook names.
	Process *HostProcess `json:"process,omitempty"`
}

// HostProcess identifies a running process on one machine: its pid and
// its start time (in clock ticks since boot, /proc/PID/stat's 22nd
// field), so that a pid reused by another process never matches.
type HostProcess struct {
	PID   int   `json:"pid"`
	Start int64 `json:"start"`
}

// Kind returns KindHostEventRecorded.
func (HostEventRecorded) Kind() Kind { return KindHostEventRecorded }
