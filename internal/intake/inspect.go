package intake

import (
	"github.com/awr-dev/awr/events"
)

// Inspection is `awr intake inspect`: how organized a project is at a
// revision.
type Inspection struct {
	ProjectRevision int64         `json:"project_revision"`
	Organization    Organization  `json:"organization"`
	Sources         []SourceState `json:"sources"`
	ExecutableWork  []string      `json:"executable_work"`
	// AwaitingVerification lists the items the source marks completed for
	// which the log holds no work_verified: awr never takes a source's
	// word for done (awr work complete records it with evidence).
	AwaitingVerification []string `json:"awaiting_verification"`
	NextAction           string   `json:"next_action"`
	// Goals are the project's goals, each with the work that serves it
	// (omitted when there is none).
	Goals []GoalView `json:"goals,omitempty"`
}

// Uninitialized is the inspection of a directory without a log: not
// initialized, and what to do first.
func Uninitialized() *Inspection {
	org := Organize(Facts{})
	return &Inspection{Organization: org, Sources: []SourceState{}, ExecutableWork: org.ExecutableWork, AwaitingVerification: []string{}, NextAction: org.NextAction}
}

// Inspect is the inspection of the project in dir, whose manifest is m,
// as r reads it at rev (now is the read's clock): its state, the gaps
// with their source references, the actions in order, the work an agent
// can start on, the items awaiting verification and the goals.
// Errors: those of reading the projections.
func Inspect(r *events.Reader, dir string, m *Manifest, rev, now int64) (*Inspection, error) {
	f, states, err := FactsAt(r, dir, m, rev, now)
	if err != nil {
		return nil, err
	}
	res := &Inspection{ProjectRevision: rev, Sources: states}
	if len(f.Goals) > 0 {
		res.Goals = LinkGoals(f.Goals, f.Readiness)
	}
	if res.AwaitingVerification, err = AwaitingVerification(r.Conn, f.Readiness, rev); err != nil {
		return nil, err
	}
	res.Organization = Organize(f)
	res.ExecutableWork, res.NextAction = res.Organization.ExecutableWork, res.Organization.NextAction
	return res, nil
}
