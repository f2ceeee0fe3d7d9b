package intake

import (
	"fmt"
	"sort"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/intake/source"
	"github.com/awr-dev/awr/projections"
)

// Organization states.
const (
	StateNotInitialized    = "not_initialized"
	StateSourceUnreadable  = "source_unreadable"
	StateNeedsOrganization = "needs_organization"
	StateReady             = "ready"
	StateBlocked           = "blocked"
	StateCompleted         = "completed"
)

// Gap codes.
const (
	GapGoalMissing       = "goal_missing"
	GapWorkMissing       = "work_missing"
	GapAcceptanceMissing = "acceptance_missing"
	GapNextActionMissing = "next_action_missing"
	GapStatusUnmapped    = "status_unmapped"
	GapDependencyMissing = "dependency_missing"
	GapDependencyCycle   = "dependency_cycle"
	GapDuplicateKey      = "duplicate_key"
	GapSourceUnreadable  = "source_unreadable"
	GapSourceMissing     = "source_missing"
	GapSourceStale       = "source_stale"
)

// Gap is one thing missing before work can start, located in its source.
type Gap struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Key     string            `json:"key,omitempty"`
	Source  *events.SourceRef `json:"source,omitempty"`
}

// Action is one step of organizing the project, in the order to do them.
type Action struct {
	Instruction string `json:"instruction"`
	DoneWhen    string `json:"done_when"`
	Command     string `json:"command,omitempty"`
}

// Organization is the report of `awr intake inspect`.
type Organization struct {
	sources        []SourceState
	State          string   `json:"state"`
	Gaps           []Gap    `json:"gaps"`
	Actions        []Action `json:"actions"`
	ExecutableWork []string `json:"executable_work"`
	NextAction     string   `json:"next_action"`
}

// Facts is what the report is computed from: the sources with their
// freshness, and the items, goals and rules they hold with their
// readiness.
type Facts struct {
	Initialized bool
	Sources     []SourceState
	Issues      []events.SourceIssue
	Readiness   []projections.Readiness
	Goals       []events.Goal
	Rules       []events.Rule
}

func ref(it projections.WorkItem) *events.SourceRef {
	r := it.Source
	if r.Path == "" {
		r.Path = it.SourcePath
	}
	return &r
}

func open(status string) bool {
	return status != projections.StatusCompleted && status != projections.StatusCancelled
}

// Organize computes the organization report. A work item is executable
// when it has a goal that exists, acceptance criteria, a next action and
// is ready to claim (status planned or ready, no blocker, every required
// dependency completed, no cycle, no live claim).
func Organize(f Facts) Organization {
	org := Organization{Gaps: []Gap{}, Actions: []Action{}, ExecutableWork: []string{}, sources: f.Sources}
	if !f.Initialized {
		org.State = StateNotInitialized
		org.Actions = append(org.Actions, Action{Instruction: "preview what awr would index", DoneWhen: "the preview lists your task, goal, plan and rule files", Command: "awr init"},
			Action{Instruction: "accept the preview", DoneWhen: ".awr/awr.db exists and awr status answers", Command: "awr init --accept"})
		org.NextAction = "awr init"
		return org
	}
	unreadable := sourceGaps(f, &org)
	goals := GoalKeys(f.Goals)
	if len(f.Goals) == 0 {
		org.Gaps = append(org.Gaps, Gap{Code: GapGoalMissing, Message: "no goal is declared (GOALS.md, or goals in a ledger)"})
	}
	if len(f.Readiness) == 0 {
		org.Gaps = append(org.Gaps, Gap{Code: GapWorkMissing, Message: "no work item is declared"})
	}
	openItems, completed := 0, 0
	dupSeen := map[string]bool{}
	for _, r := range f.Readiness {
		it := r.Item
		if !open(it.Status) {
			completed++
			continue
		}
		openItems++
		org.Gaps = append(org.Gaps, itemGaps(r, goals, len(f.Goals) > 0, dupSeen)...)
		if r.Ready && len(Unexecutable(it, goals)) == 0 {
			org.ExecutableWork = append(org.ExecutableWork, it.Key)
		}
	}
	switch {
	case unreadable:
		org.State = StateSourceUnreadable
	case len(org.ExecutableWork) > 0:
		org.State = StateReady
	case openItems == 0 && completed > 0:
		org.State = StateCompleted
	case organizationalGaps(org.Gaps):
		org.State = StateNeedsOrganization
	case openItems > 0 && allWaiting(f.Readiness):
		org.State = StateBlocked
	default:
		org.State = StateNeedsOrganization
	}
	org.Actions = actions(org)
	first := org.Actions[0]
	switch first.Command {
	case "":
		org.NextAction = first.Instruction
	case "awr source reindex", "awr source add GOALS.md", "awr source add TODO.md":
		org.NextAction = first.Instruction + ", then run: " + first.Command
	default:
		org.NextAction = first.Command
	}
	return org
}

// sourceGaps adds to org the gaps of the sources and of what reading them
// found, and reports whether a source could not be read.
func sourceGaps(f Facts, org *Organization) (unreadable bool) {
	for _, s := range f.Sources {
		switch s.Freshness {
		case Missing:
			unreadable = true
			org.Gaps = append(org.Gaps, Gap{Code: GapSourceMissing, Message: s.Path + " is in the manifest but missing", Source: &events.SourceRef{Path: s.Path}})
		case Stale:
			org.Gaps = append(org.Gaps, Gap{Code: GapSourceStale, Message: s.Path + " changed since it was indexed", Source: &events.SourceRef{Path: s.Path}})
		case New:
			org.Gaps = append(org.Gaps, Gap{Code: GapSourceStale, Message: s.Path + " is in the manifest but not indexed yet", Source: &events.SourceRef{Path: s.Path}})
		}
	}
	for _, is := range f.Issues {
		g := Gap{Message: is.Message, Key: is.Key, Source: &events.SourceRef{Path: is.Path, LineStart: is.Line, LineEnd: is.Line}}
		switch is.Code {
		case source.IssueUnreadable:
			unreadable = true
			g.Code = GapSourceUnreadable
		case source.IssueStatusUnmapped:
			g.Code = GapStatusUnmapped
		case source.IssueDuplicateKey:
			continue // reported from the items below, across sources too
		default:
			g.Code = is.Code
		}
		org.Gaps = append(org.Gaps, g)
	}
	return unreadable
}

// itemGaps returns the gaps of an open work item: its goal, acceptance
// criteria and next action, and its dependencies; a key declared twice is
// reported once per source (dupSeen).
func itemGaps(r projections.Readiness, goals map[string]bool, anyGoal bool, dupSeen map[string]bool) []Gap {
	it := r.Item
	var gaps []Gap
	if it.Goal == "" && anyGoal {
		gaps = append(gaps, Gap{Code: GapGoalMissing, Key: it.Key, Message: it.Key + " names no goal", Source: ref(it)})
	} else if it.Goal != "" && !goals[it.Goal] {
		gaps = append(gaps, Gap{Code: GapGoalMissing, Key: it.Key, Message: fmt.Sprintf("%s names goal %s, which is not declared", it.Key, it.Goal), Source: ref(it)})
	}
	if len(it.Acceptance) == 0 {
		gaps = append(gaps, Gap{Code: GapAcceptanceMissing, Key: it.Key, Message: it.Key + " has no acceptance criteria", Source: ref(it)})
	}
	if strings.TrimSpace(it.NextAction) == "" {
		gaps = append(gaps, Gap{Code: GapNextActionMissing, Key: it.Key, Message: it.Key + " has no next action", Source: ref(it)})
	}
	for _, reason := range r.Reasons {
		switch reason.Code {
		case projections.ReasonDependencyMissing:
			gaps = append(gaps, Gap{Code: GapDependencyMissing, Key: it.Key, Message: fmt.Sprintf("%s depends on %s, which no source declares", it.Key, reason.Key), Source: ref(it)})
		case projections.ReasonDependencyCycle:
			gaps = append(gaps, Gap{Code: GapDependencyCycle, Key: it.Key, Message: it.Key + " is part of a dependency cycle", Source: ref(it)})
		case projections.ReasonDuplicateKey:
			if !dupSeen[it.Key+"\x00"+it.SourcePath] {
				dupSeen[it.Key+"\x00"+it.SourcePath] = true
				gaps = append(gaps, Gap{Code: GapDuplicateKey, Key: it.Key, Message: it.Key + " is declared more than once", Source: ref(it)})
			}
		}
	}
	return gaps
}

// Why codes of an item that is not executable.
const (
	WhyNoGoal         = "no_goal"
	WhyGoalUndeclared = "goal_undeclared"
	WhyNoAcceptance   = "no_acceptance"
	WhyNoNextAction   = "no_next_action"
)

// Why is one reason a work item is not executable.
type Why struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Unexecutable returns why an item cannot be executed as organized, in
// this order: it names no goal, or one not among goals (the keys of the
// declared goals); it has no acceptance criteria; it has no next action.
// None means the item is executable once it is ready to claim. It is the
// one judgement of executability: the organization report
// (ExecutableWork) and `awr ready` both use it.
func Unexecutable(it projections.WorkItem, goals map[string]bool) []Why {
	var out []Why
	switch {
	case it.Goal == "":
		out = append(out, Why{Code: WhyNoGoal, Message: "no goal"})
	case !goals[it.Goal]:
		out = append(out, Why{Code: WhyGoalUndeclared, Message: "goal " + it.Goal + " is not declared"})
	}
	if len(it.Acceptance) == 0 {
		out = append(out, Why{Code: WhyNoAcceptance, Message: "no acceptance criteria"})
	}
	if strings.TrimSpace(it.NextAction) == "" {
		out = append(out, Why{Code: WhyNoNextAction, Message: "no next action"})
	}
	return out
}

// GoalKeys is the set of the keys of goals.
func GoalKeys(goals []events.Goal) map[string]bool {
	out := map[string]bool{}
	for _, g := range goals {
		out[g.Key] = true
	}
	return out
}

// organizationalGaps reports whether some gap is the team's to fix in its
// files (as opposed to work that is merely waiting).
func organizationalGaps(gs []Gap) bool {
	for _, g := range gs {
		if g.Code != GapSourceStale {
			return true
		}
	}
	return false
}

// allWaiting reports whether every open item is held back only by its
// status, a blocker, a dependency or a claim, not by missing organization.
func allWaiting(rs []projections.Readiness) bool {
	for _, r := range rs {
		if !open(r.Item.Status) {
			continue
		}
		if len(r.Reasons) == 0 {
			return false
		}
	}
	return true
}

// actions orders what to do: make sources readable, declare a goal and
// work, fix statuses, keys and dependencies, complete items, then start.
func actions(org Organization) []Action {
	var out []Action
	has := func(code string) []Gap {
		var gs []Gap
		for _, g := range org.Gaps {
			if g.Code == code {
				gs = append(gs, g)
			}
		}
		return gs
	}
	where := func(g Gap) string {
		if g.Source == nil || g.Source.Path == "" {
			return ""
		}
		if g.Source.LineStart > 0 {
			return fmt.Sprintf(" (%s:%d)", g.Source.Path, g.Source.LineStart)
		}
		return " (" + g.Source.Path + ")"
	}
	for _, g := range append(has(GapSourceMissing), has(GapSourceUnreadable)...) {
		out = append(out, Action{Instruction: "restore or fix " + g.Source.Path + ": " + g.Message, DoneWhen: g.Source.Path + " is readable", Command: "awr source list"})
	}
	if gs := has(GapSourceStale); len(gs) > 0 {
		out = append(out, Action{Instruction: "index the sources that changed", DoneWhen: "awr source list shows every source fresh", Command: "awr source reindex"})
	}
	if gs := has(GapGoalMissing); len(gs) > 0 && gs[0].Key == "" {
		if p := org.sourceFor(RoleGoals); p != "" {
			out = append(out, Action{Instruction: "declare the project's goal in " + p + " (a heading per goal with its status and summary)", DoneWhen: "awr intake inspect reports no goal_missing gap", Command: "awr source reindex"})
		} else {
			out = append(out, Action{Instruction: "declare the project's goal (init writes it to " + intakeGoals + " with an intake task; or write GOALS.md yourself, then run awr source add GOALS.md)", DoneWhen: "awr intake inspect reports no goal_missing gap", Command: "awr init --goal 'WHAT YOU ARE BUILDING' --accept"})
		}
	}
	if len(has(GapWorkMissing)) > 0 {
		if p := org.sourceFor(RoleTasks); p != "" {
			out = append(out, Action{Instruction: "list the work in " + p + " with a key per item", DoneWhen: "awr ready --all lists the items", Command: "awr source reindex"})
		} else {
			out = append(out, Action{Instruction: "list the work in a task register (a TODO.md checklist, a PLAN.md table or a YAML ledger) with a key per item", DoneWhen: "awr ready --all lists the items", Command: "awr source add TODO.md"})
		}
	}
	for _, code := range []string{GapStatusUnmapped, GapDuplicateKey, GapDependencyMissing, GapDependencyCycle, GapGoalMissing, GapAcceptanceMissing, GapNextActionMissing} {
		for _, g := range has(code) {
			if code == GapGoalMissing && g.Key == "" {
				continue
			}
			var instr, done string
			switch code {
			case GapStatusUnmapped:
				instr, done = "use a known status word or map it in .awr/project.toml status_map"+where(g)+": "+g.Message, "no status_unmapped gap remains"
			case GapDuplicateKey:
				instr, done = "give "+g.Key+" one home"+where(g), "each key is declared once"
			case GapDependencyMissing:
				instr, done = "declare the missing dependency or remove it"+where(g)+": "+g.Message, "every dependency of "+g.Key+" exists"
			case GapDependencyCycle:
				instr, done = "break the dependency cycle through "+g.Key+where(g), "no dependency_cycle gap remains"
			case GapGoalMissing:
				instr, done = "link "+g.Key+" to a declared goal"+where(g), g.Key+" names a declared goal"
			case GapAcceptanceMissing:
				instr, done = "write acceptance criteria for "+g.Key+where(g), g.Key+" lists acceptance criteria"
			case GapNextActionMissing:
				instr, done = "write the next action for "+g.Key+where(g), g.Key+" has a next action"
			}
			out = append(out, Action{Instruction: instr, DoneWhen: done, Command: "awr source reindex"})
		}
	}
	// Problems the adapters found in the files (malformed lines, items
	// without key or title, unknown references).
	for _, g := range org.Gaps {
		switch g.Code {
		case GapSourceMissing, GapSourceUnreadable, GapSourceStale, GapGoalMissing, GapWorkMissing, GapStatusUnmapped, GapDuplicateKey,
			GapDependencyMissing, GapDependencyCycle, GapAcceptanceMissing, GapNextActionMissing:
			continue
		}
		out = append(out, Action{Instruction: "fix" + where(g) + ": " + g.Message, DoneWhen: "awr intake inspect no longer reports it", Command: "awr source reindex"})
	}
	if len(org.ExecutableWork) > 0 {
		k := org.ExecutableWork[0]
		out = append([]Action{{Instruction: "start work on " + k, DoneWhen: "a session holds the claim on " + k,
			Command: "awr session start --work " + quote(k) + ` --agent "$USER" --claim`}}, out...)
	}
	if len(out) == 0 {
		switch org.State {
		case StateCompleted:
			out = append(out, Action{Instruction: "every work item is completed; add new work to a task register", DoneWhen: "awr ready lists new work", Command: "awr source reindex"})
		default:
			out = append(out, Action{Instruction: "everything open is waiting on a status, blocker, dependency or claim; see why", DoneWhen: "awr ready lists claimable work", Command: "awr ready --all"})
		}
	}
	return out
}

// Sorted returns keys sorted, for stable output.
func Sorted(keys []string) []string {
	out := append([]string(nil), keys...)
	sort.Strings(out)
	return out
}

// sourceFor returns the path of the first source with role, or "".
func (org Organization) sourceFor(role string) string {
	for _, s := range org.sources {
		if s.Role == role {
			return s.Path
		}
	}
	return ""
}

// GoalView is a goal with the work items that serve it (whose goal names
// it), in the order of the readiness list: the first commands.DefaultPage
// of them, and how many there are (WorkTotal).
type GoalView struct {
	events.Goal
	Work      []string `json:"work"`
	WorkTotal int      `json:"work_total"`
}

// LinkGoals pairs each goal with the work that serves it: one pass over
// the readiness list, so its cost is the goals plus the items.
func LinkGoals(goals []events.Goal, readiness []projections.Readiness) []GoalView {
	out := make([]GoalView, 0, len(goals))
	at := make(map[string]int, len(goals))
	for _, g := range goals {
		if _, dup := at[g.Key]; !dup {
			at[g.Key] = len(out)
		}
		out = append(out, GoalView{Goal: g, Work: []string{}})
	}
	for _, rd := range readiness {
		if rd.Item.Goal == "" {
			continue
		}
		if i, ok := at[rd.Item.Goal]; ok {
			if out[i].WorkTotal++; len(out[i].Work) < commands.DefaultPage {
				out[i].Work = append(out[i].Work, rd.Item.Key)
			}
		}
	}
	for i := range out {
		// A key two sources declare: each of its goals is served alike.
		if j := at[out[i].Key]; j != i {
			out[i].Work, out[i].WorkTotal = out[j].Work, out[j].WorkTotal
		}
	}
	return out
}
