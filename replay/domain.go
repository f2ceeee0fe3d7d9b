package replay

import (
	"fmt"

	"github.com/awr-dev/awr/events"
)

// domainCheck folds the log's events, in seq order, and names the first
// one that breaks an invariant of the domain that the chain alone cannot
// show (a forger can re-hash a whole log): every event sits on the stream
// its payload names; the fencing tokens of a work item's claims strictly
// increase; a work item never has two live claims (a claim is live from
// its acquisition until it is released or its lease expires at the
// acquiring event's time). Time running backwards is checked with the
// chain.
type domainCheck struct {
	maxToken map[string]int64
	claims   map[string]*claimFold
}

type claimFold struct {
	work    string
	held    bool
	expires int64
}

func newDomainCheck() *domainCheck {
	return &domainCheck{maxToken: map[string]int64{}, claims: map[string]*claimFold{}}
}

// check returns the broken invariant at e, or "".
func (d *domainCheck) check(e *events.Event, v events.Payload) string {
	want := ""
	switch pl := v.(type) {
	case *events.ProjectInitialized:
		want = "project"
	case *events.SourceIndexed:
		want = "source/" + pl.Path
	case *events.SessionStarted:
		want = "session/" + pl.SessionID
	case *events.SessionResumed:
		want = "session/" + pl.SessionID
	case *events.ContextCompiled:
		want = "session/" + pl.SessionID
	case *events.CheckpointRecorded:
		want = "session/" + pl.SessionID
	case *events.SessionEnded:
		want = "session/" + pl.SessionID
	case *events.RestatementChecked:
		want = "session/" + pl.SessionID
	case *events.ClientBound:
		want = "client/" + pl.ExternalSession
	case *events.ClaimAcquired:
		want = "work/" + pl.Work
	case *events.ClaimRenewed:
		want = "work/" + pl.Work
	case *events.ClaimReleased:
		want = "work/" + pl.Work
	}
	if want != "" && e.Stream != want {
		return fmt.Sprintf("domain: a %s on stream %s, where its payload names %s", e.Kind, e.Stream, want)
	}
	switch pl := v.(type) {
	case *events.ClaimAcquired:
		if pl.FencingToken <= d.maxToken[pl.Work] {
			return fmt.Sprintf("domain: claim %s on %s has fencing token %d, not above the %d already issued", pl.ClaimID, pl.Work, pl.FencingToken, d.maxToken[pl.Work])
		}
		for id, c := range d.claims {
			if c.work == pl.Work && c.held && (c.expires == 0 || e.OccurredAt < c.expires) {
				return fmt.Sprintf("domain: claim %s on %s is acquired while claim %s still holds it", pl.ClaimID, pl.Work, id)
			}
		}
		d.maxToken[pl.Work] = pl.FencingToken
		d.claims[pl.ClaimID] = &claimFold{work: pl.Work, held: true, expires: pl.ExpiresAt}
	case *events.ClaimRenewed:
		if c := d.claims[pl.ClaimID]; c != nil {
			c.expires = pl.ExpiresAt
		}
	case *events.ClaimReleased:
		if c := d.claims[pl.ClaimID]; c != nil {
			c.held = false
		}
	}
	return ""
}
