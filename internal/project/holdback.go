package project

import (
	"fmt"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
)

// Reasons the door adds to projections' own (projections.Readiness) for
// work that nobody holds but that cannot start now.
const (
	// ReasonLapsed: the item's session is still active but its lease
	// lapsed (its agent stopped without ending it): the work continues by
	// resuming that session, never by a new one beside it.
	ReasonLapsed = "lapsed"
	// ReasonAwaitingPerson: a seat working on the item awaits a person's
	// answer (attention_required until awr seat clear-attention).
	ReasonAwaitingPerson = "awaiting_person"
)

// holdBack marks not ready, with a reason, the items of rs that
// projections judged ready but that cannot start now: a lapsed session's
// work, a seat's work that awaits a person. Status and ready both go by
// it, so their counts agree.
func holdBack(r *events.Reader, rev, now int64, head bool, rs []projections.Readiness) error {
	lapsed, err := lapsedSessions(r, rev, now, head)
	if err != nil {
		return err
	}
	byWork := map[string][]projections.NotReadyReason{}
	for _, l := range lapsed {
		byWork[l.Work] = append(byWork[l.Work], projections.NotReadyReason{Code: ReasonLapsed, Key: l.ID,
			Message: fmt.Sprintf("session %s (%s) lapsed with its work maybe unsaved: %s", l.ID, l.Agent, l.ResumeCommand)})
	}
	seats, err := projections.SeatsAt(r.Conn, "", rev)
	if err != nil {
		return err
	}
	for _, s := range seats {
		if s.AttentionSeq != 0 && s.Work != "" {
			byWork[s.Work] = append(byWork[s.Work], projections.NotReadyReason{Code: ReasonAwaitingPerson, Key: s.Address,
				Message: fmt.Sprintf("seat %s awaits a person (attention_required at seq %d): awr seat clear-attention %s --reason 'WHAT YOU CHECKED'", s.Address, s.AttentionSeq, s.Address)})
		}
	}
	if len(byWork) == 0 {
		return nil
	}
	for i := range rs {
		if why := byWork[rs[i].Item.Key]; len(why) > 0 {
			rs[i].Reasons = append(rs[i].Reasons, why...)
			rs[i].Ready = false
		}
	}
	return nil
}
