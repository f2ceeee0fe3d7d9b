package commands

import (
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
)

// Read is embedded in every read request: the one way a front end says
// which revision an answer reflects. Its tags serve both the CLI (--at) and
// the MCP tools ("at").
type Read struct {
	// At is the revision to answer at; nil is the head.
	At *int64 `name:"at" json:"at,omitempty" help:"Answer as of the state right after event REV (0 or more; omit for the head)." placeholder:"REV"`
}

// AtRevision is a Read at revision rev.
func AtRevision(rev int64) Read { return Read{At: &rev} }

// Past reports whether the read asks for a past revision rather than the
// head.
func (r Read) Past() bool { return r.At != nil }

// Resolve turns the read into the revision to read on snapshot rd and the
// clock a reader at that revision sees: at the head, now (UTC ms); in the
// past, the occurred_at of event rev, so leases are judged as they stood
// right after it. It is the only place a requested revision is checked.
// Errors: InvalidInput for a negative revision or one beyond the head.
func (r Read) Resolve(rd *events.Reader, now int64) (rev, clock int64, err error) {
	if r.At == nil {
		return rd.Head, now, nil
	}
	at := *r.At
	if at < 0 {
		return 0, 0, fault.New(fault.InvalidInput, "--at %d: a revision is 0 or more", at).With("at", at).WithHint("awr status")
	}
	if at > rd.Head {
		return 0, 0, fault.New(fault.InvalidInput, "--at %d is beyond project_revision %d", at, rd.Head).
			With("at", at).With("project_revision", rd.Head).WithHint("awr status")
	}
	t, err := events.EventTime(rd.Conn, at)
	if err != nil {
		return 0, 0, err
	}
	return at, t, nil
}
