package commands

import (
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
)

// Completion is whether a work item is done by its evidence: state
// verified (a work_verified covers its current criteria), ready_to_verify
// (every criterion passing, `awr work complete` not run), evidence_missing
// or no_criteria; awaiting_verification when the source marks it
// completed but the log holds no verification.
type Completion struct {
	State                string               `json:"state"`
	LevelRequired        string               `json:"level_required"`
	RepoCompared         bool                 `json:"repo_compared"`
	Criteria             []CriterionStatus    `json:"criteria"`
	Verified             *events.WorkVerified `json:"verified,omitempty"`
	VerifiedSeq          int64                `json:"verified_seq,omitempty"`
	AwaitingVerification bool                 `json:"awaiting_verification"`
	Next                 string               `json:"next,omitempty"`
}

// Completion states.
const (
	CompletionVerified        = "verified"
	CompletionReadyToVerify   = "ready_to_verify"
	CompletionEvidenceMissing = "evidence_missing"
	CompletionNoCriteria      = "no_criteria"
)

// Judge fills c, whose Verified and VerifiedSeq hold the item's latest
// verification (nil for none), from the evidence of it (newest first,
// with their seqs) judged against obs; current is the session that would
// complete it ("" for none), named in the next command.
func (c *Completion) Judge(it *events.WorkItem, evidence []*events.EvidenceRecorded, seqs []int64, current string, obs Observed) {
	c.LevelRequired, c.RepoCompared = obs.LevelNeed, obs.Compare
	c.Criteria = JudgeCriteria(it, evidence, seqs, obs)
	passing := 0
	for _, cs := range c.Criteria {
		if cs.State == CriterionPassing {
			passing++
		}
	}
	switch {
	case len(it.Acceptance) == 0:
		c.State = CompletionNoCriteria
	case c.Verified != nil && coversCriteria(c.Verified, it.Acceptance):
		c.State = CompletionVerified
	case passing == len(c.Criteria):
		c.State = CompletionReadyToVerify
		if current != "" {
			c.Next = "awr work complete " + it.Key + " --session " + current
		}
	default:
		c.State = CompletionEvidenceMissing
		for _, cs := range c.Criteria {
			if cs.State != CriterionPassing {
				c.Next = EvidenceHint(it.Key, current, cs, obs.LevelNeed)
				break
			}
		}
	}
	c.AwaitingVerification = it.Status == "completed" && c.State != CompletionVerified
}

// coversCriteria reports whether v verified exactly the criteria given,
// in any order (evidence follows a criterion's text, not its position).
func coversCriteria(v *events.WorkVerified, criteria []string) bool {
	if len(v.Criteria) != len(criteria) {
		return false
	}
	want := map[string]int{}
	for _, c := range criteria {
		want[projections.NormalizeText(c)]++
	}
	for _, c := range v.Criteria {
		k := projections.NormalizeText(c.Criterion)
		if want[k] == 0 {
			return false
		}
		want[k]--
	}
	return true
}
