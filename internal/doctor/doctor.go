// Package doctor holds the checks of awr doctor that need no more than
// what the door hands them: the findings and their severities, the
// projections behind the log, sessions whose claim lapsed and stale ones
// (internal/idle finds them), executions whose process died, claims of
// seats whose agent is gone, sources missing or changed, hosts without
// awr's hooks (when a hook last ran, and the hook events that got no
// answer), permissions of the project's
// files, anchors far behind the head and a team checkout's shared store
// (Store: reachable, its lag, its clock, a log moved out). The door
// (internal/project) opens the log, runs the checks of one read of it
// (Log), lists the rig's seats, runs the checks of the project's files
// (Files) and gathers the findings into its DoctorResult; the repairs
// are commands of their own.
package doctor

import (
	"sort"
)

// Finding severities, worst first.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// The findings awr doctor reports.
const (
	FindingProjectionBehind = "projection_behind"
	FindingClaimLapsed      = "claim_lapsed"
	FindingStaleSession     = "stale_session"
	FindingClaimAgentGone   = "claim_agent_gone"
	FindingSourceMissing    = "source_missing"
	FindingSourceStale      = "source_stale"
	FindingSourceIssues     = "source_issues"
	FindingHooksMissing     = "hooks_not_installed"
	FindingHooksNeverRan    = "hooks_never_ran"
	FindingHooksNotAnswered = "hooks_not_answered"
	FindingExecutionUnknown = "execution_unknown"
	FindingPermissions      = "permissions"
	// FindingAnchorBehind is a project whose latest anchor (in the git
	// notes under refs/notes/awr) is far behind its head: a rewrite of
	// what came after it would not be caught.
	FindingAnchorBehind = "anchor_behind"
)

// Finding is one problem awr doctor found: what, how bad, the id it is
// about and the complete command that repairs it.
type Finding struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Subject  string `json:"subject,omitempty"`
	Message  string `json:"message"`
	Repair   string `json:"repair"`
}

// Hook is one host's hooks as awr doctor sees them.
type Hook struct {
	Client string `json:"client"`
	// Installed are the settings files holding awr's hooks.
	Installed []string `json:"installed"`
	// LastRanAt is when a hook of the host last ran here (RFC 3339, UTC;
	// "" when none did, as far as the end of .awr/hooks.log.ran tells),
	// and LastEvent which (awr's name, such as session_start).
	LastRanAt string `json:"last_ran_at"`
	LastEvent string `json:"last_event,omitempty"`
	// NotAnswered counts the host's hook events that reached this
	// project and got the host's empty answer (a payload of a shape awr
	// does not know, a refusal, an error), as far as .awr/hooks.log and
	// hooks.log.1 keep them; LastNotAnswered is the latest one's line
	// there (when, the host, its event, the conversation, why).
	NotAnswered     int    `json:"not_answered,omitempty"`
	LastNotAnswered string `json:"last_not_answered,omitempty"`
}

// PerCode is how many findings of one code a report lists by default:
// at a long log's head thousands of sessions can lapse, and a list of all
// of them would bury the other codes.
const PerCode = 20

// Listed keeps, of ranked findings, at most perCode of each code (in
// their order), and counts by code those it leaves out (nil when none).
func Listed(findings []Finding, perCode int) (listed []Finding, notListed map[string]int) {
	seen := map[string]int{}
	listed = make([]Finding, 0, len(findings))
	for _, f := range findings {
		if seen[f.Code]++; seen[f.Code] > perCode {
			if notListed == nil {
				notListed = map[string]int{}
			}
			notListed[f.Code]++
			continue
		}
		listed = append(listed, f)
	}
	return listed, notListed
}

// Rank orders findings worst first (stable within a severity) and counts
// them per severity; ok is false when there is an error or a warning.
func Rank(findings []Finding) (ok bool, counts map[string]int) {
	rank := map[string]int{SeverityError: 0, SeverityWarning: 1, SeverityInfo: 2}
	sort.SliceStable(findings, func(i, j int) bool { return rank[findings[i].Severity] < rank[findings[j].Severity] })
	ok, counts = true, map[string]int{}
	for _, f := range findings {
		counts[f.Severity]++
		if f.Severity != SeverityInfo {
			ok = false
		}
	}
	return ok, counts
}
