package workcontext

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// DefaultBudget is the token budget when none is given.
const DefaultBudget = 5000

// DefaultOpenLoopCap is the number of open loops above which a packet
// warns (open_loops_over_cap) when the manifest sets none.
const DefaultOpenLoopCap = 20

// IssueOpenLoopsOverCap opens the completeness issue of a work item with
// more open loops than its cap. It is a warning: every loop is still in
// the packet, and the packet is not incomplete for it.
const IssueOpenLoopsOverCap = "open_loops_over_cap"

// Dependency is one prerequisite of the work item as of the compile.
type Dependency struct {
	Key      string `json:"key"`
	Required bool   `json:"required"`
	Status   string `json:"status"`
	Found    bool   `json:"found"`
}

// Input is everything a packet may draw on, read at one revision.
type Input struct {
	Work  string
	Item  *projections.WorkItem
	Goals []events.Goal
	// GoalLinks counts the work serving each declared goal, by goal key,
	// for a packet that lists the goals (the item serves none of them);
	// nil for any other.
	GoalLinks    map[string]GoalLink
	Rules        []events.Rule
	Dependencies []Dependency
	Latest       *projections.Checkpoint
	Earlier      []projections.Checkpoint
	// Knowledge is the work item's loops, decisions, facts and hypotheses
	// (nil before its first checkpoint); Changed, the fields of the item
	// that changed in its source after the latest checkpoint.
	Knowledge *projections.KnowledgeState
	Changed   []FieldChange
	// Repo compares the repository the latest checkpoint recorded with
	// the repository now (nil: not compared, as at a past revision).
	Repo *RepoCheck
	// LoopCap is the number of open loops above which the packet warns
	// (0: DefaultOpenLoopCap).
	LoopCap int
	// Executions are the latest side effects run on the work item
	// (newest first, at most MaxExecutions) of ExecutionCount in all.
	Executions     []projections.Execution
	ExecutionCount int
	Related        []projections.WorkItem
	// RelatedMore counts, by status, the related items Related leaves
	// out.
	RelatedMore   []StatusCount
	History       []string
	StaleSources  []string
	RuleIssues    []string
	Budget        int
	SessionID     string
	AtRevision    int64
	RenderHeaders bool
}

// StatusCount is how many items of a status.
type StatusCount struct {
	Status string
	Count  int
}

// Selected is a chunk included in the packet.
type Selected struct {
	ID       string `json:"id"`
	Required bool   `json:"required"`
	Tokens   int    `json:"tokens"`
}

// Omitted is an optional chunk left out, and why.
type Omitted struct {
	ID     string `json:"id"`
	Tokens int    `json:"tokens"`
	Reason string `json:"reason"`
}

// Packet is the compiled context.
type Packet struct {
	Work            string     `json:"work"`
	RenderedContext string     `json:"rendered_context"`
	ContextHash     string     `json:"context_hash"`
	TokenEstimate   int        `json:"token_estimate"`
	RequiredTokens  int        `json:"required_tokens"`
	TokenBudget     int        `json:"token_budget"`
	Tokenizer       string     `json:"tokenizer"`
	Selected        []Selected `json:"selected"`
	Omitted         []Omitted  `json:"omitted"`
	// Knowledge is what the packet carries of the work item's loops,
	// decisions, facts and hypotheses (null before any checkpoint).
	Knowledge *projections.KnowledgeState `json:"knowledge"`
	// ChangedSinceCheckpoint lists the fields of the work item that
	// changed in its source after the latest checkpoint.
	ChangedSinceCheckpoint []FieldChange `json:"changed_since_checkpoint"`
	NextAction             NextAction    `json:"next_action"`
	// Repository compares the repository the latest checkpoint recorded
	// with the repository at the compile (null when not compared: no
	// checkpoint yet, or a past revision).
	Repository *RepoCheck `json:"repository"`
}

// Completeness says which required facts the packet holds.
type Completeness struct {
	Complete             bool     `json:"complete"`
	WorkItemFound        bool     `json:"work_item_found"`
	GoalContextComplete  bool     `json:"goal_context_complete"`
	AcceptanceComplete   bool     `json:"acceptance_complete"`
	NextActionPresent    bool     `json:"next_action_present"`
	DependenciesComplete bool     `json:"dependencies_complete"`
	RulesComplete        bool     `json:"rules_complete"`
	SourceFresh          bool     `json:"source_fresh"`
	Issues               []string `json:"issues"`
}

type chunk struct {
	id       string
	required bool
	text     string
	tokens   int
}

// Compile renders the packet for in. Required chunks always go in; the
// optional ones are added in priority order while the total stays within
// the budget, and the rest are listed as omitted. The hash is the SHA-256
// of the rendered packet, which is deterministic for a given input.
// Errors: BudgetExceeded (details required, budget) when the required
// chunks alone exceed the budget; InvalidInput for a budget below 1.
func Compile(in Input) (*Packet, *Completeness, error) {
	budget := in.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	if budget < 1 {
		return nil, nil, fault.New(fault.InvalidInput, "context compile: --budget %d must be at least 1", budget).With("flag", "--budget")
	}
	comp := completeness(in)
	required, optional := chunks(in)
	var all []chunk
	reqTokens := 0
	for i := range required {
		n, err := Count(required[i].text)
		if err != nil {
			return nil, nil, fault.Wrap(fault.Internal, err, "context compile: count tokens")
		}
		required[i].tokens = n
		reqTokens += n
	}
	header := headerText(in, comp)
	hTokens, err := Count(header)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Internal, err, "context compile: count tokens")
	}
	reqTokens += hTokens
	if reqTokens > budget {
		return nil, nil, fault.New(fault.BudgetExceeded, "context compile: the required facts of %s take %d tokens, more than the budget of %d", in.Work, reqTokens, budget).
			With("required", reqTokens).With("budget", budget).WithHint("%s", budgetHint(in.Work, in.SessionID, roundUp(reqTokens)))
	}
	all = append(all, required...)
	used := reqTokens
	var omitted []Omitted
	for _, c := range optional {
		n, err := Count(c.text)
		if err != nil {
			return nil, nil, fault.Wrap(fault.Internal, err, "context compile: count tokens")
		}
		c.tokens = n
		if used+n > budget {
			omitted = append(omitted, Omitted{ID: c.id, Tokens: n, Reason: fmt.Sprintf("over budget: %d tokens would bring the packet to %d of %d", n, used+n, budget)})
			continue
		}
		used += n
		all = append(all, c)
	}
	render := func(cs []chunk) string {
		var b strings.Builder
		b.WriteString(header)
		for _, c := range cs {
			b.WriteString(c.text)
		}
		return b.String()
	}
	text := render(all)
	total, err := Count(text)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Internal, err, "context compile: count tokens")
	}
	// Token counts are not exactly additive across chunk boundaries: drop
	// optional chunks from the end until the whole fits.
	for total > budget && len(all) > len(required) {
		last := all[len(all)-1]
		all = all[:len(all)-1]
		omitted = append(omitted, Omitted{ID: last.id, Tokens: last.tokens, Reason: "over budget once joined"})
		text = render(all)
		if total, err = Count(text); err != nil {
			return nil, nil, fault.Wrap(fault.Internal, err, "context compile: count tokens")
		}
	}
	sum := sha256.Sum256([]byte(text))
	p := &Packet{Work: in.Work, RenderedContext: text, ContextHash: "sha256:" + hex.EncodeToString(sum[:]), TokenEstimate: total,
		RequiredTokens: reqTokens, TokenBudget: budget, Tokenizer: Tokenizer, Selected: []Selected{}, Omitted: []Omitted{},
		Knowledge: in.Knowledge.Listed(projections.MaxClosedListed), ChangedSinceCheckpoint: in.Changed, NextAction: NextActionOf(&in), Repository: in.Repo}
	if p.ChangedSinceCheckpoint == nil {
		p.ChangedSinceCheckpoint = []FieldChange{}
	}
	for _, c := range all {
		p.Selected = append(p.Selected, Selected{ID: c.id, Required: c.required, Tokens: c.tokens})
	}
	p.Omitted = append(p.Omitted, omitted...)
	return p, comp, nil
}

func roundUp(n int) int { return (n/500 + 1) * 500 }

func completeness(in Input) *Completeness {
	c := &Completeness{Issues: []string{}}
	it := in.Item
	c.WorkItemFound = it != nil
	if !c.WorkItemFound {
		c.Issues = append(c.Issues, "work item "+in.Work+" not found")
	} else {
		for _, g := range in.Goals {
			if g.Key == it.Goal {
				c.GoalContextComplete = true
			}
		}
		if !c.GoalContextComplete {
			if it.Goal == "" {
				c.Issues = append(c.Issues, it.Key+" names no goal")
			} else {
				c.Issues = append(c.Issues, "goal "+it.Goal+" of "+it.Key+" is not declared")
			}
		}
		c.AcceptanceComplete = len(it.Acceptance) > 0
		if !c.AcceptanceComplete {
			c.Issues = append(c.Issues, it.Key+" has no acceptance criteria")
		}
		c.NextActionPresent = strings.TrimSpace(it.NextAction) != "" || (in.Latest != nil && strings.TrimSpace(in.Latest.NextAction) != "")
		if !c.NextActionPresent {
			c.Issues = append(c.Issues, it.Key+" has no next action")
		}
	}
	c.DependenciesComplete = true
	for _, d := range in.Dependencies {
		if !d.Found {
			c.DependenciesComplete = false
			c.Issues = append(c.Issues, "dependency "+d.Key+" is not declared")
		}
	}
	c.RulesComplete = len(in.RuleIssues) == 0
	c.Issues = append(c.Issues, in.RuleIssues...)
	c.SourceFresh = len(in.StaleSources) == 0
	for _, s := range in.StaleSources {
		c.Issues = append(c.Issues, "source "+s+" changed since it was indexed")
	}
	c.Complete = c.WorkItemFound && c.GoalContextComplete && c.AcceptanceComplete && c.NextActionPresent && c.DependenciesComplete && c.RulesComplete && c.SourceFresh
	limit := in.LoopCap
	if limit == 0 {
		limit = DefaultOpenLoopCap
	}
	if k := in.Knowledge; k != nil && len(k.OpenLoops) > limit {
		c.Issues = append(c.Issues, fmt.Sprintf("%s: %s has %d open loops, more than the cap of %d", IssueOpenLoopsOverCap, in.Work, len(k.OpenLoops), limit))
	}
	return c
}

func headerText(in Input, c *Completeness) string {
	var b strings.Builder
	if !c.Complete {
		b.WriteString("CONTEXT INCOMPLETE: " + strings.Join(c.Issues, "; ") + "\n\n")
	}
	fmt.Fprintf(&b, "# Work context: %s\n", in.Work)
	if in.SessionID != "" {
		fmt.Fprintf(&b, "Session: %s\n", in.SessionID)
	}
	fmt.Fprintf(&b, "As of project_revision %d\n", in.AtRevision)
	return b.String()
}

// chunks builds the required and the optional chunks, in the order they
// are rendered (optional ones by priority).
func chunks(in Input) (required, optional []chunk) {
	for _, sec := range packetSections {
		list := &optional
		if sec.required {
			list = &required
		}
		sec.add(&in, func(id string, lines ...string) {
			var b strings.Builder
			b.WriteString("\n")
			for _, l := range lines {
				b.WriteString(l)
				b.WriteString("\n")
			}
			*list = append(*list, chunk{id: id, required: sec.required, text: b.String()})
		})
	}
	return required, optional
}

// packetSection is one kind of section of a packet: whether a budget may
// drop it, and what adds its chunks (none, one, or one per goal).
type packetSection struct {
	required bool
	add      func(in *Input, add func(id string, lines ...string))
}

// packetSections are the packet's sections in the order it shows them:
// the required ones, then the optional ones (chunks drops these, last
// first, to fit a budget).
var packetSections = []packetSection{
	{true, goalSection},
	{true, workSection},
	{true, func(in *Input, add func(string, ...string)) {
		if it := in.Item; it != nil && len(it.Acceptance) > 0 {
			lines := []string{"## Acceptance criteria"}
			for _, a := range it.Acceptance {
				lines = append(lines, "- "+SafeText(a))
			}
			add("acceptance", lines...)
		}
	}},
	{true, func(in *Input, add func(string, ...string)) {
		if it := in.Item; it != nil && strings.TrimSpace(it.Blocker) != "" {
			add("blocker", "## Blocker", SafeText(it.Blocker))
		}
	}},
	{true, dependencySection},
	{true, func(in *Input, add func(string, ...string)) {
		if hard := ruleLines(in.Rules, true); len(hard) > 0 {
			add("hard_rules", append([]string{"## Hard rules"}, hard...)...)
		}
	}},
	{true, func(in *Input, add func(string, ...string)) {
		if lines := nextActionLines(NextActionOf(in)); len(lines) > 0 {
			add("next_action", lines...)
		}
	}},
	{true, func(in *Input, add func(string, ...string)) {
		if len(in.Changed) > 0 {
			lines := []string{"## Changed in the register since the last checkpoint"}
			for _, c := range in.Changed {
				lines = append(lines, fmt.Sprintf("- %s (seq %d): was %q, now %q", c.Field, c.Seq, c.Then, c.Now))
			}
			add("changed_since_checkpoint", lines...)
		}
	}},
	{true, func(in *Input, add func(string, ...string)) {
		if cp := in.Latest; cp != nil {
			add("checkpoint", fmt.Sprintf("## Latest checkpoint %s (seq %d, session %s, by %s)", cp.ID, cp.Seq, cp.SessionID, SafeText(cp.Agent)),
				"Digest: "+SafeText(cp.Digest))
		}
	}},
	{true, func(in *Input, add func(string, ...string)) {
		if in.Repo != nil {
			add("repository", repositoryLines(in.Repo)...)
		}
	}},
	{true, func(in *Input, add func(string, ...string)) {
		if len(in.Executions) > 0 {
			add("executions", executionLines(in.Executions, in.ExecutionCount)...)
		}
	}},
	{true, func(in *Input, add func(string, ...string)) {
		if k := in.Knowledge; k != nil && len(k.OpenLoops) > 0 {
			add("open_loops", append([]string{fmt.Sprintf("## Open loops (%d)", len(k.OpenLoops))}, knowledgeLines(k.OpenLoops, loopDetail)...)...)
		}
	}},
	{true, func(in *Input, add func(string, ...string)) {
		if k := in.Knowledge; k != nil && len(k.Decisions) > 0 {
			add("decisions", append([]string{"## Decisions in force"}, knowledgeLines(k.Decisions, noDetail)...)...)
		}
	}},
	{true, func(in *Input, add func(string, ...string)) {
		if k := in.Knowledge; k != nil && len(k.Closed) > 0 {
			add("closed_since_checkpoint", closedLines(in.Work, in.AtRevision, k)...)
		}
	}},
	{false, func(in *Input, add func(string, ...string)) {
		if k := in.Knowledge; k != nil && len(k.Facts) > 0 {
			add("facts", append([]string{"## Facts"}, knowledgeLines(k.Facts, factDetail)...)...)
		}
	}},
	{false, func(in *Input, add func(string, ...string)) {
		if lines := unrecordedDiffLines(in.Repo); len(lines) > 0 {
			add("unrecorded_diff", lines...)
		}
	}},
	{false, func(in *Input, add func(string, ...string)) {
		if k := in.Knowledge; k != nil && len(k.Hypotheses) > 0 {
			add("hypotheses", append([]string{"## Hypotheses (unverified: confirm or retract them)"}, knowledgeLines(k.Hypotheses, noDetail)...)...)
		}
	}},
	{false, relatedSection},
	{false, func(in *Input, add func(string, ...string)) {
		if soft := ruleLines(in.Rules, false); len(soft) > 0 {
			add("soft_rules", append([]string{"## Soft rules"}, soft...)...)
		}
	}},
	{false, func(in *Input, add func(string, ...string)) {
		if lines := goalLines(*in); len(lines) > 0 {
			add("goals", lines...)
		}
	}},
	{false, func(in *Input, add func(string, ...string)) {
		if len(in.Earlier) > 0 {
			lines := []string{"## Earlier checkpoints"}
			for i := len(in.Earlier) - 1; i >= 0; i-- {
				cp := in.Earlier[i]
				lines = append(lines, fmt.Sprintf("- seq %d (%s): %s Next: %s", cp.Seq, SafeText(cp.Agent), SafeText(cp.Digest), SafeText(cp.NextAction)))
			}
			add("earlier_checkpoints", lines...)
		}
	}},
	{false, func(in *Input, add func(string, ...string)) {
		if len(in.History) > 0 {
			add("history", append([]string{"## Recent history of " + in.Work}, in.History...)...)
		}
	}},
}

// goalSection adds the goal of the work item (each goal of its key).
func goalSection(in *Input, add func(string, ...string)) {
	it := in.Item
	if it == nil {
		return
	}
	for _, g := range in.Goals {
		if g.Key == it.Goal {
			lines := []string{"## Goal " + SafeText(g.Key) + ": " + SafeText(g.Title)}
			if g.Status != "" {
				lines = append(lines, "Status: "+SafeText(g.Status))
			}
			if g.Summary != "" {
				lines = append(lines, SafeText(shortSummary(g.Summary)))
			}
			add("goal", lines...)
		}
	}
}

// workSection adds the work item: title, status, priority, summary and
// where it is written.
func workSection(in *Input, add func(string, ...string)) {
	it := in.Item
	if it == nil {
		return
	}
	work := []string{"## Work " + SafeText(it.Key) + ": " + SafeText(it.Title), "Status: " + SafeText(it.Status)}
	if it.Priority != "" {
		work = append(work, "Priority: "+SafeText(it.Priority))
	}
	if it.Summary != "" {
		work = append(work, SafeText(it.Summary))
	}
	ref := it.Source
	if ref.Path == "" {
		ref.Path = it.SourcePath
	}
	work = append(work, fmt.Sprintf("Source: %s:%d-%d", SafeText(ref.Path), ref.LineStart, ref.LineEnd))
	add("work", work...)
}

// dependencySection adds the required dependencies not completed.
func dependencySection(in *Input, add func(string, ...string)) {
	var open []string
	for _, d := range in.Dependencies {
		if d.Required && d.Status != projections.StatusCompleted {
			st := d.Status
			if !d.Found {
				st = "not declared"
			}
			open = append(open, "- "+SafeText(d.Key)+": "+SafeText(st))
		}
	}
	if len(open) > 0 {
		add("dependencies", append([]string{"## Unresolved dependencies"}, open...)...)
	}
}

// ruleLines lists the hard rules (hard) or the others, sorted.
func ruleLines(rules []events.Rule, hard bool) []string {
	var out []string
	for _, r := range rules {
		if (r.Strength == "hard") != hard {
			continue
		}
		line := "- " + SafeText(r.Key) + ": " + SafeText(r.Text)
		if len(r.Paths) > 0 {
			line += " (paths: " + SafeText(strings.Join(r.Paths, ", ")) + ")"
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

// relatedSection adds the related items and the count of those left out.
func relatedSection(in *Input, add func(string, ...string)) {
	if len(in.Related) == 0 {
		return
	}
	lines := []string{"## Related work"}
	for _, r := range in.Related {
		lines = append(lines, "- "+SafeText(r.Key)+" ("+SafeText(r.Status)+"): "+SafeText(r.Title))
	}
	if len(in.RelatedMore) > 0 {
		n, parts := 0, make([]string, 0, len(in.RelatedMore))
		for _, c := range in.RelatedMore {
			n += c.Count
			parts = append(parts, fmt.Sprintf("%d %s", c.Count, SafeText(c.Status)))
		}
		lines = append(lines, fmt.Sprintf("- and %d more: %s", n, strings.Join(parts, ", ")))
	}
	add("related", lines...)
}

func noDetail(*projections.Knowledge) string { return "" }

// factDetail says when a fact was last confirmed.
func factDetail(f *projections.Knowledge) string {
	if f.ConfirmedSeq > 0 {
		return fmt.Sprintf("confirmed at seq %d", f.ConfirmedSeq)
	}
	return ""
}

// nextActionLines renders the next action: the register's and the latest
// checkpoint's, labelled, and said to differ when they do.
func nextActionLines(na NextAction) []string {
	switch {
	case na.Source == "" && na.Checkpoint == "":
		return nil
	case na.Checkpoint == "":
		return []string{"## Next action (from the register)", SafeText(na.Source)}
	case na.Source == "":
		return []string{fmt.Sprintf("## Next action (from the latest checkpoint, seq %d)", na.CheckpointSeq), SafeText(na.Checkpoint)}
	case !na.DiffersFromSource:
		return []string{"## Next action (the register and the latest checkpoint agree)", SafeText(na.Checkpoint)}
	}
	lines := []string{"## Next action: the register and the latest checkpoint differ",
		"From the register: " + SafeText(na.Source),
		fmt.Sprintf("From the latest checkpoint (seq %d): %s", na.CheckpointSeq, SafeText(na.Checkpoint))}
	if na.SourceChangedSeq > 0 {
		lines = append(lines, fmt.Sprintf("The register's next action changed at seq %d, after the checkpoint: it is the newer statement of intent.", na.SourceChangedSeq))
	} else {
		lines = append(lines, "The register did not change after the checkpoint: the checkpoint's is the newer statement of progress.")
	}
	return lines
}

// budgetHint is the compile to retry with a budget that fits: for the
// same session when there is one, so the retry still records the compile.
func budgetHint(work, session string, budget int) string {
	if session != "" {
		return fmt.Sprintf("awr context compile --work %s --session %s --budget %d", work, session, budget)
	}
	return fmt.Sprintf("awr context compile --work %s --budget %d", work, budget)
}

// MaxExecutions bounds the executions a packet lists.
const MaxExecutions = 5

// executionLines renders what was already done on the work item through
// `awr exec run`, so a successor does not do it twice.
func executionLines(xs []projections.Execution, total int) []string {
	lines := []string{fmt.Sprintf("## Side effects already run (%d recorded, latest %d; awr exec list --work %s)", total, len(xs), SafeText(xs[0].Work))}
	for _, x := range xs {
		state := x.State
		switch {
		case x.State == projections.ExecStarted:
			state = "no finish recorded (running, or unknown if its process died): awr exec show " + x.ID + " before running it again"
		case x.Signal != "":
			state += " (" + x.Signal + ")"
		case x.ExitCode != nil:
			state += fmt.Sprintf(" (exit %d)", *x.ExitCode)
		}
		line := fmt.Sprintf("- %s (seq %d): %s", SafeText(x.Key), x.StartedSeq, state)
		if x.Purpose != "" {
			line += ". Purpose: " + SafeText(x.Purpose)
		}
		lines = append(lines, line)
	}
	return lines
}
