package project

import (
	"fmt"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
)

// ReasonAwaitingPerson is the reason the door adds to projections' own
// (projections.Readiness) for work nobody holds that waits on a person: a
// seat working on it awaits a person's answer (an attention_required
// until awr seat clear-attention).
const ReasonAwaitingPerson = "awaiting_person"

// holdBack marks not ready, with a reason, the items of rs that
// projections judged ready but that wait on a person: a seat's work whose
// attention nobody answered. Status and ready both go by it, so their
// counts agree.
func holdBack(r *events.Reader, rev int64, rs []projections.Readiness) error {
	byWork, err := awaitingPerson(r, rev)
	if err != nil || len(byWork) == 0 {
		return err
	}
	for i := range rs {
		if why := byWork[rs[i].Item.Key]; len(why) > 0 {
			rs[i].Reasons = append(rs[i].Reasons, why...)
			rs[i].Ready = false
		}
	}
	return nil
}

// awaitingPerson returns, by work key, the reasons a seat holds work back
// as of rev: a seat working on it awaits a person's answer.
func awaitingPerson(r *events.Reader, rev int64) (map[string][]projections.NotReadyReason, error) {
	byWork := map[string][]projections.NotReadyReason{}
	seats, err := projections.SeatsAt(r.Conn, "", rev)
	if err != nil {
		return nil, err
	}
	for _, s := range seats {
		if s.AttentionSeq != 0 && s.Work != "" {
			byWork[s.Work] = append(byWork[s.Work], projections.NotReadyReason{Code: ReasonAwaitingPerson, Key: s.Address,
				Message: fmt.Sprintf("seat %s awaits a person (attention_required at seq %d): awr seat clear-attention %s --reason 'WHAT YOU CHECKED'", s.Address, s.AttentionSeq, s.Address)})
		}
	}
	return byWork, nil
}
