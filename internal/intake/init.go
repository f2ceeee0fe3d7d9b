package intake

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/awr-dev/awr/internal/lazyre"
	"github.com/awr-dev/awr/internal/secret"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake/source"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/projections"
)

// InitOptions are the flags of `awr init`.
type InitOptions struct {
	Name      string
	Goal      string
	Sources   []string          // --source PATH, choosing among candidates
	StatusMap map[string]string // --status-map SRC=CANON
	FieldMap  map[string]string // --field-map CANON=SRC
	Version   string
	// Store is --store: the URL of the shared database the log goes to
	// (checked by CheckStoreURL); "" keeps the manifest's, or the
	// embedded SQLite file.
	Store string
}

// Write is one file init creates or changes.
type Write struct {
	Path   string `json:"path"`
	Action string `json:"action"`
}

// Preview is the answer of `awr init`, with or without --accept.
type Preview struct {
	Status          string           `json:"status"`
	RequiresAccept  bool             `json:"requires_accept"`
	Project         string           `json:"project"`
	Name            string           `json:"name"`
	ProjectID       string           `json:"project_id,omitempty"`
	Inventory       *Inventory       `json:"inventory"`
	Mapping         []ManifestSource `json:"mapping"`
	Ambiguous       []Ambiguity      `json:"ambiguous"`
	Writes          []Write          `json:"writes"`
	Organization    Organization     `json:"organization"`
	Accept          string           `json:"accept"`
	Next            string           `json:"next"`
	ProjectRevision int64            `json:"project_revision"`
	// Store is the shared store the log goes to (the manifest's [store]
	// table); absent for the embedded SQLite file.
	Store *StoreTable `json:"store,omitempty"`
	// OpenUpstream, set by the caller for a project with a Store, opens
	// the shared log the new log is built in.
	OpenUpstream func(ctx context.Context) (events.Upstream, error) `json:"-"`
	// Fingerprint is, for a preview that changes the maps of an existing
	// manifest (--status-map, --field-map on an initialized project), the
	// fingerprint of the manifest it changes (ManifestFingerprint): the
	// accept command carries it, and an accept refuses with SourceStale
	// when the manifest is no longer that one.
	Fingerprint string `json:"fingerprint,omitempty"`

	manifest *Manifest
	files    map[string][]byte // generated files to create, by relative path
	updates  map[string][]byte // awr's own files to replace (the intake goal), by relative path
	extends  bool              // the existing manifest only gains the intake files
	remaps   []string          // the sources whose maps the flags change in the existing manifest (remapped)
	again    string            // the command that previews the preview again (a stale accept's hint)
	conflict bool              // the existing manifest says otherwise
}

// Conflict reports whether the preview found an existing manifest that
// says otherwise than the flags (which init never rewrites).
func (p *Preview) Conflict() bool { return p.conflict }

// SharedTaken is the refusal of an init whose shared store already holds
// the project's key: the project exists, and a checkout joins it with its
// manifest, not with an init.
func SharedTaken(store string, rev int64) error {
	return fault.New(fault.SourceConflict, "init: the shared store (%s) already holds this project, at project_revision %d; a checkout joins it with a copy of that project's .awr/project.toml (its [store] table), and its next command catches up; a new project takes another name (awr init --store URL --name OTHER_NAME --accept)", store, rev).
		With("store", store).With("project_revision", rev).
		WithHint("awr init --help")
}

// intakeGoals and intakeLedger are the files --goal proposes.
const (
	intakeGoals  = ".awr/intake/GOALS.md"
	intakeLedger = ".awr/intake/work-ledger.yaml"
)

// Plan computes what `awr init` would do in dir, writing nothing: the
// sources (chosen, from the manifest, or proposed by discovery), the
// intake files --goal adds, the manifest, the writes, and the
// organization the sources would give.
// Errors: InvalidInput for a --source that is not a file of the project,
// a bad --status-map or --field-map, or a manifest that does not parse.
func Plan(dir string, opts InitOptions) (*Preview, error) {
	inv, err := Discover(dir)
	if err != nil {
		return nil, fault.Wrap(fault.Storage, err, "init: look for sources")
	}
	p := &Preview{Project: dir, Inventory: inv, Writes: []Write{}, Ambiguous: []Ambiguity{}, files: map[string][]byte{}, updates: map[string][]byte{}}
	p.Name = opts.Name
	if p.Name == "" {
		p.Name = filepath.Base(dir)
	}
	existing, hasManifest, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	sources, err := p.planSources(dir, opts, existing, hasManifest)
	if err != nil {
		return nil, err
	}
	var keep []Write // existing files used as they are
	if opts.Goal != "" {
		if sources, keep, err = p.planGoal(dir, opts.Goal, sources); err != nil {
			return nil, err
		}
	}
	applyMaps(sources, opts)
	if err := p.planManifest(sources, opts, existing, hasManifest); err != nil {
		return nil, err
	}
	p.planWrites(dir, opts, existing, hasManifest, keep)
	p.planOrganization(dir, opts, sources)
	p.markSeen(opts, hasManifest)
	return p, nil
}

// markSeen says of every file discovery found whether the planned
// manifest maps it and, when not, why and the command that would.
func (p *Preview) markSeen(opts InitOptions, hasManifest bool) {
	mapped := map[string]bool{}
	for _, ms := range p.Mapping {
		mapped[ms.Path] = true
	}
	ambiguous := map[string]Ambiguity{}
	for _, a := range p.Ambiguous {
		for _, c := range a.Candidates {
			ambiguous[c] = a
		}
	}
	for _, list := range [][]Candidate{p.Inventory.TaskRegisters, p.Inventory.YAMLLedgers, p.Inventory.Goals, p.Inventory.Plans, p.Inventory.Rules} {
		for i := range list {
			c := &list[i]
			c.Indexed, c.Why, c.Include = mapped[c.Path], "", ""
			if c.Indexed {
				continue
			}
			switch a, amb := ambiguous[c.Path]; {
			case hasManifest:
				c.Why = "not in .awr/project.toml"
				c.Include = "awr source add " + quote(c.Path)
			case amb:
				c.Why = fmt.Sprintf("one of %d candidates for %s; awr will not guess", len(a.Candidates), a.Role)
				c.Include = p.includeCommand(c.Path)
			case len(opts.Sources) > 0:
				c.Why = "not chosen with --source"
				c.Include = p.includeCommand(c.Path)
			default:
				c.Why = "another file holds its role"
				c.Include = p.includeCommand(c.Path)
			}
		}
	}
}

// includeCommand is the preview that maps path beside what the preview
// maps (ambiguous roles but path's left to choose).
func (p *Preview) includeCommand(path string) string {
	parts := []string{"awr init"}
	for _, ms := range p.Mapping {
		if ms.Path != intakeGoals && ms.Path != intakeLedger {
			parts = append(parts, "--source "+quote(ms.Path))
		}
	}
	return strings.Join(append(parts, "--source "+quote(path)), " ")
}

// planSources returns the sources init maps: those --source chose, the
// existing manifest's, or what discovery proposes (recording the
// ambiguous roles in p).
// Errors: InvalidInput for a --source that is not a file of the project.
func (p *Preview) planSources(dir string, opts InitOptions, existing *Manifest, hasManifest bool) ([]ManifestSource, error) {
	var sources []ManifestSource
	switch {
	case len(opts.Sources) > 0:
		return chosen("init: --source", dir, p.Inventory, opts.Sources)
	case hasManifest:
		// A copy: the maps below must not write through to the manifest
		// read from disk, which the conflict check compares against.
		for _, ms := range existing.Sources {
			ms.StatusMap, ms.FieldMap = merge(nil, ms.StatusMap), merge(nil, ms.FieldMap)
			sources = append(sources, ms)
		}
		if opts.Name == "" {
			p.Name = existing.Name
		}
	default:
		sources, p.Ambiguous = Propose(p.Inventory)
	}
	if p.Ambiguous == nil {
		p.Ambiguous = []Ambiguity{}
	}
	return sources, nil
}

// planGoal adds what --goal writes: the intake goals file (created, or
// its G-1 updated) and ledger (created once), both added to sources. keep
// lists the existing files used as they are.
// Errors: InvalidInput when the project already has a goals source;
// Storage when the intake goals file cannot be read.
func (p *Preview) planGoal(dir, goal string, sources []ManifestSource) (_ []ManifestSource, keep []Write, _ error) {
	hasGoals := false
	for _, s := range sources {
		// The intake goals file init made itself does not count: a
		// repeated --goal is a retry, not a second goal.
		if s.Path == intakeGoals || s.Path == intakeLedger {
			continue
		}
		if s.Role == RoleGoals {
			hasGoals = true
			continue
		}
		// Goals may live in a ledger too.
		if si, missing := Read(dir, s); !missing && len(si.Goals) > 0 {
			hasGoals = true
		}
	}
	if hasGoals {
		return nil, nil, fault.New(fault.InvalidInput, "init: --goal is for a project with no goal, and this one has a goals source").WithHint("awr init")
	}
	// The goal lives in one place, the intake goals file: a new goal
	// creates it, a changed one updates its G-1 there; the ledger is
	// created once and is the team's from then on.
	switch old, err := readBounded(filepath.Join(dir, filepath.FromSlash(intakeGoals)), maxSourceSize); {
	case errors.Is(err, os.ErrNotExist):
		p.files[intakeGoals] = goalsFileFor(goal)
	case err != nil:
		return nil, nil, fault.Wrap(fault.Storage, err, "init: read %s", intakeGoals)
	default:
		updated, err := setGoal(old, goal)
		if err != nil {
			return nil, nil, err
		}
		if !bytes.Equal(updated, old) {
			p.updates[intakeGoals] = updated
		}
	}
	switch old, err := readBounded(filepath.Join(dir, filepath.FromSlash(intakeLedger)), maxSourceSize); {
	case errors.Is(err, os.ErrNotExist):
		p.files[intakeLedger] = ledgerFile()
	case err != nil || !bytes.Equal(old, ledgerFile()):
		keep = append(keep, Write{Path: intakeLedger, Action: "keep: the existing file is used as it is"})
	}
	for _, gen := range []ManifestSource{
		{Path: intakeGoals, Adapter: source.GoalsMarkdown, Role: RoleGoals},
		{Path: intakeLedger, Adapter: source.YAMLLedger, Role: RoleTasks},
	} {
		listed := false
		for _, s := range sources {
			listed = listed || s.Path == gen.Path
		}
		if !listed {
			sources = append(sources, gen)
		}
	}
	return sources, keep, nil
}

// applyMaps adds --status-map and --field-map to the task and plan
// sources.
func applyMaps(sources []ManifestSource, opts InitOptions) {
	for i := range sources {
		if sources[i].Role != RoleTasks && sources[i].Role != RolePlan {
			continue
		}
		if len(opts.StatusMap) > 0 {
			sources[i].StatusMap = merge(sources[i].StatusMap, opts.StatusMap)
		}
		if len(opts.FieldMap) > 0 {
			sources[i].FieldMap = merge(sources[i].FieldMap, opts.FieldMap)
		}
	}
}

// planManifest builds the manifest init would write, keeping an existing
// manifest's [continuity] and [store] settings, and sets p's mapping and
// store from it.
// Errors: InvalidInput for a manifest that does not validate.
func (p *Preview) planManifest(sources []ManifestSource, opts InitOptions, existing *Manifest, hasManifest bool) error {
	p.manifest = &Manifest{Version: ManifestVersion, Name: p.Name, Sources: sources}
	if hasManifest {
		// Init maps sources; the existing [continuity] and [store]
		// settings are kept.
		p.manifest.Continuity, p.manifest.Store = existing.Continuity, existing.Store
	}
	if opts.Store != "" {
		p.manifest.Store = &StoreTable{URL: opts.Store, Project: p.Name}
		if hasManifest && existing.Store != nil && existing.Store.Project != "" {
			p.manifest.Store.Project = existing.Store.Project
		}
	}
	if err := p.manifest.Validate("--source/--status-map"); err != nil {
		return err
	}
	p.Mapping, p.Store = sources, p.manifest.Store
	if p.Mapping == nil {
		p.Mapping = []ManifestSource{}
	}
	return nil
}

// planWrites lists in p.Writes what init would write: .awr/, the
// manifest (created, extended, or in conflict), the intake files, the
// log, and .gitignore.
func (p *Preview) planWrites(dir string, opts InitOptions, existing *Manifest, hasManifest bool, keep []Write) {
	_, dbErr := os.Stat(events.DBPath(dir))
	hasDB := dbErr == nil
	if _, err := os.Stat(filepath.Join(dir, ".awr")); err != nil {
		p.Writes = append(p.Writes, Write{Path: ".awr/", Action: "create (mode 0700)"})
	}
	var touched []string
	switch {
	case !hasManifest:
		p.Writes = append(p.Writes, Write{Path: ".awr/project.toml", Action: fmt.Sprintf("create: the manifest (project %q, %d sources)", p.Name, len(p.manifest.Sources))})
	case extendsManifest(existing, p.manifest):
		p.extends = true
		p.Writes = append(p.Writes, Write{Path: ".awr/project.toml", Action: "update: add " + strings.Join(added(existing, p.manifest), " and ") + " to the sources"})
	case hasDB && len(remapped(existing, p.manifest)) > 0:
		// Only the maps change, which the flags name: the manifest is
		// updated, once accepted with the fingerprint of the one read
		// here, and the sources are indexed again under the new maps.
		p.remaps = remapped(existing, p.manifest)
		p.Fingerprint = ManifestFingerprint(existing)
		p.Writes = append(p.Writes, Write{Path: ".awr/project.toml", Action: "update: " + mapChange(opts) + " for " + strings.Join(p.remaps, " and ")})
		touched = append(touched, p.remaps...)
	case !existing.Equal(p.manifest):
		p.conflict = true
		p.Writes = append(p.Writes, Write{Path: ".awr/project.toml", Action: "conflict: an existing manifest says otherwise; it is never overwritten"})
	}
	for _, rel := range []string{intakeGoals, intakeLedger} {
		if _, ok := p.files[rel]; ok {
			p.Writes = append(p.Writes, Write{Path: rel, Action: "create"})
			touched = append(touched, rel)
		}
		if _, ok := p.updates[rel]; ok {
			p.Writes = append(p.Writes, Write{Path: rel, Action: fmt.Sprintf("update: the goal G-1 becomes %q", oneLine(opts.Goal))})
			touched = append(touched, rel)
		}
	}
	if p.conflict || len(p.files)+len(p.updates) > 0 || p.extends || len(p.remaps) > 0 || !hasDB {
		// Said only when something else is written: a retry that writes
		// nothing has nothing to keep.
		p.Writes = append(p.Writes, keep...)
	}
	if p.extends {
		for _, rel := range added(existing, p.manifest) {
			if !slices.Contains(touched, rel) {
				touched = append(touched, rel)
			}
		}
	}
	switch {
	case !hasDB:
		p.Writes = append(p.Writes, Write{Path: ".awr/awr.db", Action: fmt.Sprintf("create (mode 0600): the event log, with project_initialized and %d source_indexed", len(p.manifest.Sources))})
	case len(touched) > 0:
		p.Writes = append(p.Writes, Write{Path: ".awr/awr.db", Action: "append source_indexed for " + strings.Join(touched, " and ")})
	}
	if gitRepo(dir) && !ignored(dir) {
		p.Writes = append(p.Writes, Write{Path: ".gitignore", Action: ignoreAction})
	}
}

// planOrganization sets p.Organization to what the sources would give
// (generated files parsed from their planned content) and p.Accept to the
// command that accepts the preview; an ambiguous role comes first, as
// the gap and the action to take before anything else.
func (p *Preview) planOrganization(dir string, opts InitOptions, sources []ManifestSource) {
	var facts Facts
	facts.Initialized = true
	var items []projections.WorkItem
	for _, ms := range sources {
		var si events.SourceIndexed
		content, ok := p.files[ms.Path]
		if !ok {
			content, ok = p.updates[ms.Path]
		}
		if ok {
			res := source.Parse(ms.Adapter, ms.Path, content, ms.Options)
			si = events.SourceIndexed{Path: ms.Path, Items: res.Items, Goals: res.Goals, Rules: res.Rules, Issues: res.Issues}
		} else {
			var missing bool
			si, missing = Read(dir, ms)
			if missing {
				facts.Sources = append(facts.Sources, SourceState{Path: ms.Path, Adapter: ms.Adapter, Role: ms.Role, Freshness: Missing})
				continue
			}
		}
		facts.Sources = append(facts.Sources, SourceState{Path: ms.Path, Adapter: ms.Adapter, Role: ms.Role, Freshness: Fresh})
		for _, it := range si.Items {
			items = append(items, projections.WorkItem{WorkItem: it, SourcePath: ms.Path})
		}
		facts.Goals = append(facts.Goals, si.Goals...)
		facts.Rules = append(facts.Rules, si.Rules...)
		facts.Issues = append(facts.Issues, si.Issues...)
	}
	facts.Readiness = projections.Evaluate(items, nil)
	p.Organization = Organize(facts)
	p.Accept = acceptCommand(opts, p.Ambiguous, p.Mapping)
	if p.Fingerprint != "" {
		p.Accept += " --fingerprint " + p.Fingerprint
		p.again = PreviewAgain(p.Accept, p.Fingerprint)
	}
	for _, a := range p.Ambiguous {
		p.Organization.Gaps = append([]Gap{{Code: "source_ambiguous", Message: fmt.Sprintf("%d candidates for %s: %s", len(a.Candidates), a.Role, strings.Join(a.Candidates, ", "))}}, p.Organization.Gaps...)
	}
	if len(p.Ambiguous) > 0 {
		// Nothing else can be done before the choice: say so first.
		choose := Action{Instruction: "choose which file holds each role (--source); awr will not guess", DoneWhen: "awr init --accept succeeds", Command: p.Accept}
		p.Organization.Actions = append([]Action{choose}, p.Organization.Actions...)
		p.Organization.NextAction = p.Accept
		if p.Organization.State == StateReady {
			p.Organization.State = StateNeedsOrganization
		}
	}
}

// extendsManifest reports whether m is old with only the intake files
// added to its sources (what --goal does to an initialized project).
func extendsManifest(old, m *Manifest) bool {
	add := added(old, m)
	if len(add) == 0 {
		return false
	}
	cp := *old
	cp.Sources = append([]ManifestSource(nil), old.Sources...)
	for _, s := range m.Sources {
		if slices.Contains(add, s.Path) {
			cp.Sources = append(cp.Sources, s)
		}
	}
	return cp.Equal(m)
}

// remapped lists the sources of old whose status or field map m changes,
// when that is all m changes (the same sources, in the same order, read
// otherwise the same; the same name, continuity and store): what
// --status-map and --field-map do to an initialized project. Nil when m
// changes anything else, or nothing.
func remapped(old, m *Manifest) []string {
	if len(old.Sources) != len(m.Sources) {
		return nil
	}
	cp := *old
	cp.Sources = append([]ManifestSource(nil), old.Sources...)
	var out []string
	for i := range cp.Sources {
		if cp.Sources[i].Path != m.Sources[i].Path {
			return nil
		}
		if OptionsHash(cp.Sources[i]) != OptionsHash(m.Sources[i]) {
			out = append(out, cp.Sources[i].Path)
		}
		cp.Sources[i].StatusMap, cp.Sources[i].FieldMap = m.Sources[i].StatusMap, m.Sources[i].FieldMap
	}
	if !cp.Equal(m) {
		return nil
	}
	return out
}

// mapChange says what the flags map ("status_map todo = ready").
func mapChange(opts InitOptions) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(opts.StatusMap)) {
		parts = append(parts, fmt.Sprintf("status_map %q = %q", k, opts.StatusMap[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(opts.FieldMap)) {
		parts = append(parts, fmt.Sprintf("field_map %q = %q", k, opts.FieldMap[k]))
	}
	return strings.Join(parts, ", ")
}

// StaleManifest is the refusal of an init accept whose manifest is no
// longer the one its preview read (fingerprint fp, now now): nothing is
// written, and the hint, again, previews the same flags anew.
func StaleManifest(dir, fp, now, again string) error {
	return fault.New(fault.SourceStale, "init: %s changed since the preview (fingerprint %s, now %s); nothing was written", ManifestPath(dir), fp, now).
		With("path", ManifestPath(dir)).With("fingerprint", fp).With("found", now).WithHint("%s", again)
}

// PreviewAgain is the command that previews again what accept (a
// preview's accept command, carrying --fingerprint fp) accepts.
func PreviewAgain(accept, fp string) string {
	return strings.TrimSuffix(strings.Replace(accept, "awr init --accept", "awr init", 1), " --fingerprint "+fp)
}

// ManifestFingerprint is the fingerprint of a manifest as awr writes it
// (its encoding, so that a comment or a layout changes nothing): 16 hex
// digits of its SHA-256.
func ManifestFingerprint(m *Manifest) string {
	b, err := m.Encode()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// added lists the intake files m lists and old does not.
func added(old, m *Manifest) []string {
	var out []string
	for _, s := range m.Sources {
		if s.Path != intakeGoals && s.Path != intakeLedger {
			continue
		}
		if !slices.ContainsFunc(old.Sources, func(o ManifestSource) bool { return o.Path == s.Path }) {
			out = append(out, s.Path)
		}
	}
	return out
}

// g1Heading is the heading of the goal init writes (goalsFileFor).
var g1Heading = lazyre.New(`^##\s+G-1\b\s*(?:—|-|:)?\s*(.*)$`)

// setGoal returns the intake goals file content with its goal G-1 set to
// goal: the heading's title and, when it still repeats the old title, its
// Summary line. The rest of the file (the team's edits) is kept.
// Errors: InvalidInput when the file has no G-1 heading to update.
func setGoal(content []byte, goal string) ([]byte, error) {
	lines := strings.Split(string(content), "\n")
	at := -1
	var oldTitle string
	for i, l := range lines {
		if m := g1Heading.FindStringSubmatch(strings.TrimRight(l, "\r")); m != nil {
			at, oldTitle = i, strings.TrimSpace(m[1])
			break
		}
	}
	if at < 0 {
		return nil, fault.New(fault.InvalidInput, "init: --goal updates goal G-1 of %s, and that file has no G-1 heading; declare the goal there yourself", intakeGoals).
			With("path", intakeGoals).WithHint("awr source reindex")
	}
	goal = oneLine(goal)
	lines[at] = "## G-1 — " + goal
	for i := at + 1; i < len(lines) && !strings.HasPrefix(lines[i], "#"); i++ {
		if v, ok := strings.CutPrefix(strings.TrimRight(lines[i], "\r"), "Summary:"); ok {
			if strings.TrimSpace(v) == oldTitle {
				lines[i] = "Summary: " + goal
			}
			break
		}
	}
	return []byte(strings.Join(lines, "\n")), nil
}

// acceptCommand is the exact command that applies the preview.
func acceptCommand(opts InitOptions, amb []Ambiguity, mapping []ManifestSource) string {
	parts := []string{"awr init --accept"}
	if opts.Name != "" {
		parts = append(parts, "--name "+quote(opts.Name))
	}
	if opts.Goal != "" {
		parts = append(parts, "--goal "+quote(opts.Goal))
	}
	for _, s := range opts.Sources {
		parts = append(parts, "--source "+quote(s))
	}
	if len(amb) > 0 && len(opts.Sources) == 0 {
		// Choosing one candidate means naming every source to index.
		for _, m := range mapping {
			if !strings.HasPrefix(m.Path, ".awr/intake/") {
				parts = append(parts, "--source "+quote(m.Path))
			}
		}
		for _, a := range amb {
			parts = append(parts, "--source "+quote(a.Candidates[0]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(opts.StatusMap)) {
		parts = append(parts, "--status-map "+quote(k+"="+opts.StatusMap[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(opts.FieldMap)) {
		parts = append(parts, "--field-map "+quote(k+"="+opts.FieldMap[k]))
	}
	return strings.Join(parts, " ")
}

// quote makes s one shell word: as is when safe, else single-quoted (a
// GitHub key, #12, would otherwise start a comment).
func quote(s string) string {
	if strings.ContainsAny(s, " \t'\"$`\\#;&|<>()*?[]{}!~") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// chosen resolves --source paths: candidates keep their discovered adapter
// and role; other files are mapped by name and content.
func chosen(op, dir string, inv *Inventory, paths []string) ([]ManifestSource, error) {
	byPath := map[string]Candidate{}
	for _, c := range inv.All() {
		byPath[c.Path] = c
	}
	var out []ManifestSource
	for _, raw := range paths {
		rel := Clean(raw)
		if c, ok := byPath[rel]; ok {
			out = append(out, ManifestSource{Path: c.Path, Adapter: c.Adapter, Role: c.Role})
			continue
		}
		if filepath.IsAbs(rel) || strings.HasPrefix(rel, "..") {
			return nil, fault.New(fault.InvalidInput, "%s %s: not a path inside the project", op, raw).With("path", raw)
		}
		if pathcheck.InState(filepath.Join(dir, filepath.FromSlash(rel))) {
			return nil, fault.New(fault.InvalidInput, "%s %s: inside %s/, awr's own state, not a file of the project", op, raw, pathcheck.StateDir).
				With("path", raw).With("rule", string(pathcheck.RuleState)).WithHint("awr intake inspect")
		}
		if secretNamed(rel) {
			return nil, fault.New(fault.InvalidInput, "%s %s: looks like a secret; awr never reads it", op, secret.Redact(raw)).With("path", secret.Redact(raw))
		}
		full := filepath.Join(dir, filepath.FromSlash(rel))
		if _, err := sourceFile(dir, rel); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fault.New(fault.InvalidInput, "%s %s: %v", op, raw, err).With("path", raw).WithHint("awr init")
		}
		content, err := readBounded(full, maxSourceSize)
		if err != nil {
			return nil, fault.New(fault.InvalidInput, "%s %s: not a readable file of the project", op, raw).With("path", raw).WithHint("awr init")
		}
		ms := ManifestSource{Path: rel, Role: RoleTasks}
		lower := strings.ToLower(filepath.Base(rel))
		switch {
		case strings.HasSuffix(lower, ".yaml") || strings.HasSuffix(lower, ".yml"):
			ms.Adapter = source.YAMLLedger
		case goalsFile.MatchString(lower):
			ms.Adapter, ms.Role = source.GoalsMarkdown, RoleGoals
		case planFile.MatchString(lower):
			ms.Adapter, ms.Role = source.PlanMarkdown, RolePlan
		case rulesFile.MatchString(lower):
			ms.Adapter, ms.Role = source.RulesMarkdown, RoleRules
		case strings.HasSuffix(lower, ".md"):
			ms.Adapter, _ = sniffMarkdown(content)
		default:
			adapter, _, ok := sniffData(content[:min(len(content), 4096)])
			if !ok {
				return nil, fault.New(fault.InvalidInput, "%s %s: no adapter reads this kind of file (Markdown, YAML, or a JSON, JSON Lines or CSV export of a task tool)", op, raw).With("path", raw)
			}
			ms.Adapter = adapter
		}
		out = append(out, ms)
	}
	return out, nil
}

func gitRepo(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil
}

// runtimeIgnores are the files under .awr/ that are this machine's
// runtime state, never the team's: the log and its companions, leftovers
// of an interrupted init, the hooks log, locks, the project id, the
// seats' context files, the executions' output and the sources' cache
// (SeenFile). The manifest and .awr/intake/ are the team's and
// stay tracked.
var runtimeIgnores = []string{
	".awr/awr.db", ".awr/awr.db-*", ".awr/.awr.db.tmp-*", ".awr/init-pending*",
	".awr/hooks.log*", ".awr/*.lock", ".awr/project-id", ".awr/.project-id-*", ".awr/seats/", ".awr/executions/",
	".awr/sources.seen*",
}

// ignoreMarker opens the block init appends to .gitignore.
const ignoreMarker = "# awr: this machine's runtime state (.awr/project.toml and .awr/intake/ are the team's: keep them tracked)"

// ignoreAction is what the preview says init does to .gitignore.
const ignoreAction = "append awr's runtime files (.awr/awr.db*, hooks log, locks, seat context files; not the manifest or .awr/intake/)"

// ignored reports whether .gitignore already keeps awr's runtime files
// out: init's block is there, or .awr/ as a whole is ignored (a choice
// the team made, left alone).
func ignored(dir string) bool {
	b, err := readBounded(filepath.Join(dir, ".gitignore"), maxSourceSize)
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		switch strings.TrimSpace(l) {
		case ".awr", ".awr/", "/.awr", "/.awr/", ignoreMarker:
			return true
		}
	}
	return false
}

func goalsFileFor(goal string) []byte {
	return []byte(fmt.Sprintf("# Goals\n\nProposed by `awr init --goal`. This file is yours: edit it freely, then run `awr source reindex`.\n\n## G-1 — %s\n\nStatus: active\nSummary: %s\n", oneLine(goal), oneLine(goal)))
}

func ledgerFile() []byte {
	return []byte(`# Intake work proposed by awr init --goal. This file is yours: edit it
# freely, then run: awr source reindex
items:
  - id: INTAKE-001
    title: Organize the project's goal, plan and task sources
    kind: intake
    status: ready
    priority: p0
    goal: G-1
    next_action: Review .awr/intake/GOALS.md, then list the project's current work in a task register (a TODO.md checklist, a PLAN.md table or a YAML ledger) with a key, status, acceptance criteria and next action per item
    acceptance:
      - The goal in .awr/intake/GOALS.md states the outcome and how it is measured
      - Every piece of current work has a key, a status, acceptance criteria and a next action in a task register listed in .awr/project.toml
      - awr intake inspect lists work other than INTAKE-001 in executable_work
`)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Accept applies a preview atomically: nothing makes the directory a
// project until the log holding project_initialized and one source_indexed
// per source has committed. The manifest and the generated files (never
// overwriting a file) are first staged under .awr/init-pending; a new log
// is built whole at a temporary path in .awr/ and only then linked to
// .awr/awr.db, the commit point (a log an older awr left with its schema
// and no event is finished in place, in one transaction); the staged files
// are published after it (FinishInit, which any later open of the log
// completes if this one is cut short). In a git repository .awr/ is then
// added to .gitignore. An interruption before the commit point leaves the
// directory as it was, but for leftovers the next init or import removes
// (RemoveLeftovers); one after it leaves the whole project. Accepting what
// is already there changes nothing and says so. The caller serializes
// concurrent inits and imports of one directory.
// Errors: SourceConflict when candidates are ambiguous (naming them), an
// existing manifest differs, or another process created the log first;
// the storage errors of the log; ctx's when it is cancelled before the
// commit point.
func Accept(ctx context.Context, p *Preview, open func(create bool) (*events.Store, error), env func(*events.Store) *commands.Env) (*Preview, error) {
	dir := p.Project
	if err := refuseAmbiguous(p); err != nil {
		return nil, err
	}
	_, dbErr := os.Stat(events.DBPath(dir))
	hasDB := dbErr == nil
	var st *events.Store
	var rev int64
	var id string
	if hasDB {
		// Opened as for creation: a log with no event (what an older awr
		// left when interrupted) is not a project, and is finished below.
		var err error
		if st, err = open(true); err != nil {
			return nil, err
		}
		if rev, id, err = head(ctx, st); err != nil {
			return nil, err
		}
	}
	if rev > 0 {
		// A committed init may not have published its manifest yet.
		if err := FinishInit(dir); err != nil {
			return nil, err
		}
	}
	hasManifest, extends, err := checkManifest(dir, p, rev > 0)
	if err != nil {
		return nil, err
	}
	if rev > 0 && (extends || len(p.remaps) > 0 || len(p.files) > 0 || len(p.updates) > 0) {
		return update(ctx, p, st, env, rev, id, extends || len(p.remaps) > 0)
	}
	if hasManifest && rev > 0 && len(p.files) == 0 {
		return acceptUnchanged(p, rev, id)
	}
	return acceptNew(ctx, p, acceptState{st: st, hasDB: hasDB, rev: rev, hasManifest: hasManifest, extends: extends}, open, env)
}

// refuseAmbiguous returns the refusal of a preview with an ambiguous role.
// Errors: SourceConflict naming the candidates.
func refuseAmbiguous(p *Preview) error {
	if len(p.Ambiguous) == 0 {
		return nil
	}
	var parts []string
	for _, a := range p.Ambiguous {
		parts = append(parts, a.Role+": "+strings.Join(a.Candidates, ", "))
	}
	return fault.New(fault.SourceConflict, "init: more than one candidate for a role (%s); awr will not guess", strings.Join(parts, "; ")).
		With("ambiguous", p.Ambiguous).WithHint("%s", p.Accept)
}

// checkManifest compares the manifest on disk with the one p planned:
// absent, equal, or extended by the intake files are fine, and so, in a
// project with events (initialized), is the manifest whose maps p
// changes, when it is still the one p read (its fingerprint).
// Errors: SourceConflict when it maps different sources; SourceStale
// when the manifest whose maps p changes changed since p read it; those
// of ReadManifest.
func checkManifest(dir string, p *Preview, initialized bool) (hasManifest, extends bool, err error) {
	planned := p.manifest
	existing, hasManifest, err := ReadManifest(dir)
	if err != nil {
		return false, false, err
	}
	if hasManifest && initialized && len(p.remaps) > 0 {
		if now := ManifestFingerprint(existing); now != p.Fingerprint {
			return false, false, StaleManifest(dir, p.Fingerprint, now, p.again)
		}
		return true, false, nil
	}
	extends = hasManifest && extendsManifest(existing, planned)
	if hasManifest && !existing.Equal(planned) && !extends {
		return false, false, fault.New(fault.SourceConflict, "init: %s already exists and maps different sources; it is never overwritten", ManifestPath(dir)).
			With("path", ManifestPath(dir)).WithHint("awr source reindex")
	}
	return hasManifest, extends, nil
}

// acceptUnchanged answers the accept of what is already there: nothing
// changes but, in a git repository, .awr/ added to .gitignore.
// Errors: Storage when .gitignore cannot be written.
func acceptUnchanged(p *Preview, rev int64, id string) (*Preview, error) {
	out := *p
	out.Status, out.RequiresAccept, out.ProjectRevision, out.ProjectID, out.Writes, out.Next = "unchanged", false, rev, id, []Write{}, "awr status"
	if gitRepo(p.Project) && !ignored(p.Project) {
		if err := appendIgnore(p.Project); err != nil {
			return nil, err
		}
		out.Status, out.Writes = "initialized", []Write{{Path: ".gitignore", Action: ignoreAction}}
	}
	return &out, nil
}

// acceptState is what Accept found before it builds a new project.
type acceptState struct {
	st          *events.Store // the log found, when hasDB
	hasDB       bool
	rev         int64
	hasManifest bool
	extends     bool
}

// acceptNew makes dir a project: it stages the files, indexes the
// sources, commits the log (the commit point) and publishes the staged
// files; cut short before the commit point it leaves dir as it was.
// Errors: those of Accept.
func acceptNew(ctx context.Context, p *Preview, s acceptState, open func(create bool) (*events.Store, error), env func(*events.Store) *commands.Env) (*Preview, error) {
	dir := p.Project
	awrDir := filepath.Join(dir, ".awr")
	newDir := false
	if _, err := os.Stat(awrDir); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(awrDir, 0o700); err != nil {
			return nil, fault.Wrap(fault.Storage, err, "init: create .awr")
		}
		newDir = true
	}
	committed := false
	defer func() {
		if !committed {
			// Leave the directory as it was found.
			RemoveLeftovers(dir)
			if newDir {
				os.Remove(awrDir)
			}
		}
	}()
	if s.rev == 0 {
		// What an earlier interrupted init or import left.
		RemoveLeftovers(dir)
	}
	if err := stageInit(p, s); err != nil {
		return nil, err
	}
	payloads, err := indexPlanned(p)
	if err != nil {
		return nil, err
	}
	res, err := commitLog(ctx, p, s, payloads, env)
	if err != nil {
		return nil, err
	}
	committed = true
	if newDir {
		// The .awr entry itself must survive a crash.
		syncDir(dir)
	}
	if err := publishInit(dir, res.Project.ProjectID); err != nil {
		return nil, err
	}
	if !s.hasDB {
		// The caller's handle on the log it can now open.
		if _, err := open(false); err != nil {
			return nil, err
		}
	}
	out := *p
	out.Status, out.RequiresAccept, out.ProjectRevision, out.ProjectID, out.Next = "initialized", false, res.ProjectRevision, res.Project.ProjectID, p.Organization.NextAction
	return &out, nil
}

// stageInit stages the generated files and a new manifest under
// .awr/init-pending and replaces, before the log commits, awr's own
// files that change in place (the intake goal, the manifest gaining the
// intake files): cut short, the same command finishes them.
// Errors: SourceConflict for a file that exists; Storage.
func stageInit(p *Preview, s acceptState) error {
	dir := p.Project
	staged := map[string][]byte{}
	for rel, content := range p.files {
		staged[rel] = content
	}
	if !s.hasManifest {
		raw, err := p.manifest.Encode()
		if err != nil {
			return fault.Wrap(fault.Internal, err, "init: encode manifest")
		}
		staged[".awr/project.toml"] = raw
	}
	if err := stage(dir, staged); err != nil {
		return err
	}
	if err := replaceFiles(dir, p.updates); err != nil {
		return err
	}
	if s.extends {
		if err := WriteManifest(dir, p.manifest); err != nil {
			return err
		}
	}
	return nil
}

// indexPlanned reads and parses every source of the planned manifest, a
// generated file from where it is staged (moving it into place keeps its
// content, size and time).
// Errors: SourceConflict for a source that is missing.
func indexPlanned(p *Preview) ([]events.SourceIndexed, error) {
	dir := p.Project
	var payloads []events.SourceIndexed
	for _, ms := range p.manifest.Sources {
		si, missing := Read(dir, ms)
		if _, ok := p.files[ms.Path]; ok {
			if staged, gone := Read(pendingDir(dir), ms); !gone {
				si, missing = staged, false
			}
		}
		if missing {
			return nil, fault.New(fault.SourceConflict, "init: source %s is missing", ms.Path).With("path", ms.Path).WithHint("awr init")
		}
		payloads = append(payloads, si)
	}
	return payloads, nil
}

// commitLog appends project_initialized and the sources: in place, in
// one transaction, to a log that exists; otherwise to a new log built
// whole (in the shared store, when the preview has one).
// Errors: Interrupted when ctx is cancelled; those of
// commands.InitAndIndex and BuildLog.
func commitLog(ctx context.Context, p *Preview, s acceptState, payloads []events.SourceIndexed, env func(*events.Store) *commands.Env) (*commands.InitIndexResult, error) {
	req := commands.InitIndexRequest{Name: p.manifest.Name, Sources: payloads}
	var res *commands.InitIndexResult
	var err error
	if s.hasDB {
		// In place, in one transaction: its commit is the commit point.
		res, err = commands.InitAndIndex(ctx, env(s.st), req)
	} else {
		var up events.Upstream
		if p.OpenUpstream != nil {
			if up, err = p.OpenUpstream(ctx); err != nil {
				return nil, err
			}
		}
		err = BuildLog(ctx, p.Project, up, func(st *events.Store) error {
			req.Fresh = true
			res, err = commands.InitAndIndex(ctx, env(st), req)
			return err
		})
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, Interrupted("init", p.Accept)
		}
		return nil, err
	}
	return res, nil
}

// publishInit finishes an init after its commit point: the staged files
// moved into place, the project id recorded, .awr/ added to .gitignore
// in a git repository.
// Errors: Storage.
func publishInit(dir, projectID string) error {
	if err := FinishInit(dir); err != nil {
		return err
	}
	if err := RecordProjectID(dir, projectID); err != nil {
		return err
	}
	if gitRepo(dir) && !ignored(dir) {
		if err := appendIgnore(dir); err != nil {
			return err
		}
	}
	return nil
}

// update applies a preview to a project whose log has events: the
// intake files are created (never over a file) or, for the goal,
// replaced atomically, the manifest gains them, and one transaction
// appends source_indexed for each of them that changed. The files are
// written before the log commits: an update cut short leaves them stale
// or not indexed, as every command says, and the same init finishes it.
// Errors: SourceConflict for a file created meanwhile; Storage; those of
// commands.IndexSources.
func update(ctx context.Context, p *Preview, st *events.Store, env func(*events.Store) *commands.Env, rev int64, id string, extends bool) (*Preview, error) {
	dir := p.Project
	for _, rel := range slices.Sorted(maps.Keys(p.files)) {
		if err := placeNew(dir, rel, p.files[rel]); err != nil {
			return nil, err
		}
	}
	if err := replaceFiles(dir, p.updates); err != nil {
		return nil, err
	}
	if extends {
		if err := WriteManifest(dir, p.manifest); err != nil {
			return nil, err
		}
	}
	var payloads []events.SourceIndexed
	for _, ms := range p.manifest.Sources {
		if ms.Path != intakeGoals && ms.Path != intakeLedger && !slices.Contains(p.remaps, ms.Path) {
			continue
		}
		si, missing := Read(dir, ms)
		if missing {
			return nil, fault.New(fault.SourceConflict, "init: source %s is missing", ms.Path).With("path", ms.Path).WithHint("awr source list")
		}
		payloads = append(payloads, si)
	}
	res, err := commands.IndexSources(ctx, env(st), commands.IndexSourcesRequest{Sources: payloads})
	if err != nil {
		return nil, err
	}
	if gitRepo(dir) && !ignored(dir) {
		if err := appendIgnore(dir); err != nil {
			return nil, err
		}
	}
	out := *p
	out.Status, out.RequiresAccept, out.ProjectRevision, out.ProjectID, out.Next = "updated", false, res.ProjectRevision, id, p.Organization.NextAction
	if len(res.Indexed) == 0 && res.ProjectRevision == rev {
		out.Status = "unchanged"
	}
	return &out, nil
}

// placeNew writes a file of the project that must not exist yet: written
// and synced under a temporary name beside it, then linked into place.
// Errors: SourceConflict when the file appeared meanwhile; Storage.
func placeNew(dir, rel string, content []byte) error {
	final := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return fault.Wrap(fault.Storage, err, "init: create %s", rel)
	}
	tmp := filepath.Join(filepath.Dir(final), "."+filepath.Base(final)+".tmp-"+rand.Text())
	defer os.Remove(tmp)
	if err := writeNew(tmp, content); err != nil {
		return err
	}
	if err := publish(tmp, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fault.New(fault.SourceConflict, "init: %s already exists; it is never overwritten", rel).With("path", rel).WithHint("awr init")
		}
		return fault.Wrap(fault.Storage, err, "init: create %s", rel)
	}
	syncDir(filepath.Dir(final))
	return nil
}

// replaceFiles replaces each of awr's own files (by project-relative
// path) atomically: written and synced under a temporary name beside it,
// then renamed over it.
// Errors: Storage.
func replaceFiles(dir string, files map[string][]byte) error {
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		final := filepath.Join(dir, filepath.FromSlash(rel))
		if err := pathcheck.WriteFile(final, files[rel], 0o644, true); err != nil {
			return fault.Wrap(fault.Storage, err, "init: update %s", rel)
		}
	}
	return nil
}

// ProjectIDPath is where a project keeps the id of its log's project,
// beside the log and, like it, never shared (the manifest is the team's
// and every checkout of it has a log of its own).
func ProjectIDPath(dir string) string { return filepath.Join(dir, ".awr", "project-id") }

// RecordProjectID writes id to ProjectIDPath (a temporary file, synced,
// renamed), so that another project's database put in .awr/ is noticed at
// open. An init or import cut short before it leaves none, and nothing is
// checked.
// Errors: Storage when the file cannot be written.
func RecordProjectID(dir, id string) error {
	path := ProjectIDPath(dir)
	if err := pathcheck.WriteFile(path, []byte(id+"\n"), 0o600, true); err != nil {
		return fault.Wrap(fault.Storage, err, "record project id %s", path)
	}
	return nil
}

// RecordedProjectID returns the id ProjectIDPath holds ("" when there is
// none).
func RecordedProjectID(dir string) string {
	b, err := readBounded(ProjectIDPath(dir), 256)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Interrupted is the error of an init or import cancelled (Ctrl-C,
// SIGTERM) before its commit point: nothing was written. hint is the
// command that starts it again.
func Interrupted(op, hint string) error {
	return fault.New(fault.Storage, "%s: interrupted before it committed; nothing was written", op).WithHint("%s", hint)
}

// head returns the log's project_revision and, when its first event is
// project_initialized, the project id.
func head(ctx context.Context, st *events.Store) (rev int64, id string, err error) {
	err = st.Read(ctx, func(r *events.Reader) error {
		rev = r.Head
		pi, _, err := events.ReadInitialized(r.Conn) // a seq 1 that does not decode names no project
		if pi != nil {
			id = pi.ProjectID
		}
		return err
	})
	return rev, id, err
}

// The names of what an init or an import writes before its commit point,
// inside .awr/.
const (
	// pendingName is the folder an init stages its files in, mirroring
	// their place in the project (.awr/init-pending/.awr/project.toml).
	pendingName = "init-pending"
	// tempLogPrefix begins the name of a log being built, and of its
	// -wal and -shm companions.
	tempLogPrefix = ".awr.db.tmp-"
)

func pendingDir(dir string) string { return filepath.Join(dir, ".awr", pendingName) }

// stage writes files (by project-relative path) into the staging folder
// all at once: each is written and synced in a private folder, which is
// then renamed to .awr/init-pending, so FinishInit never sees a part of
// them. A file already in the project is never overwritten.
// Errors: SourceConflict for a file that exists; Storage.
func stage(dir string, files map[string][]byte) error {
	if len(files) == 0 {
		return nil
	}
	private, err := os.MkdirTemp(filepath.Join(dir, ".awr"), pendingName+".tmp-")
	if err != nil {
		return fault.Wrap(fault.Storage, err, "init: stage the files to create")
	}
	defer os.RemoveAll(private)
	for rel, content := range files {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel))); err == nil {
			return fault.New(fault.SourceConflict, "init: %s already exists; it is never overwritten", rel).With("path", rel)
		}
		path := filepath.Join(private, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fault.Wrap(fault.Storage, err, "init: stage %s", rel)
		}
		if err := writeNew(path, content); err != nil {
			return err
		}
		syncDir(filepath.Dir(path))
	}
	if err := os.Rename(private, pendingDir(dir)); err != nil {
		return fault.Wrap(fault.Storage, err, "init: stage the files to create")
	}
	syncDir(filepath.Join(dir, ".awr"))
	return nil
}

// FinishInit publishes what an init staged before its log committed: each
// file under .awr/init-pending moves to its place in the project unless a
// file is already there (which is kept), then the staging folder goes. It
// is idempotent and safe to run from several processes at once. Call it
// only for a log with events: the staged files of an init whose log never
// committed are leftovers (RemoveLeftovers).
// Errors: Storage when a file cannot be moved into place.
func FinishInit(dir string) error {
	root := pendingDir(dir)
	if _, err := os.Lstat(root); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	synced := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // another process is publishing it
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		final := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
			return err
		}
		if err := publish(path, final); err != nil && !errors.Is(err, fs.ErrExist) && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		synced[filepath.Dir(final)] = true
		return nil
	})
	if err != nil {
		return fault.Wrap(fault.Storage, err, "init: publish the staged files").WithHint("awr init --accept")
	}
	for d := range synced {
		syncDir(d)
	}
	os.RemoveAll(root)
	return nil
}

// RemoveLeftovers removes what an interrupted init or import left in .awr/
// before its commit point: the staging folder and logs being built. Call
// it only while no log with events is in place and no other init or import
// of the directory runs.
func RemoveLeftovers(dir string) {
	os.RemoveAll(pendingDir(dir))
	for _, pattern := range []string{tempLogPrefix + "*", pendingName + ".tmp-*", ".project-id-*"} {
		leftovers, _ := filepath.Glob(filepath.Join(dir, ".awr", pattern))
		for _, path := range leftovers {
			os.RemoveAll(path)
		}
	}
}

// BuildLog creates the project's event log atomically: build fills a new
// log at a temporary path in .awr/ (created if missing), which is closed,
// so that its WAL is checkpointed into it, synced, and only then linked to
// .awr/awr.db. Until that link nothing makes the directory a project: an
// interruption leaves at most the temporary files, which the next init or
// import removes. ctx is checked last before the link.
// Errors: SourceConflict when .awr/awr.db appeared meanwhile; Storage;
// those of build; ctx.Err() when ctx is done before the link.
//
// With up, the log is the cache of that shared log, which must be empty:
// build's writes commit to it first (the shared log's commit is then the
// project's), and the cache is published after.
// Errors: also SourceConflict when up already holds events.
func BuildLog(ctx context.Context, dir string, up events.Upstream, build func(st *events.Store) error) error {
	awrDir := filepath.Join(dir, ".awr")
	if err := os.MkdirAll(awrDir, 0o700); err != nil {
		return fault.Wrap(fault.Storage, err, "create project directory")
	}
	tmp := filepath.Join(awrDir, tempLogPrefix+rand.Text())
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(tmp + suffix)
		}
	}()
	if up != nil {
		h, err := up.Head(ctx)
		if err != nil {
			up.Close()
			return err
		}
		if h.Revision > 0 {
			up.Close()
			return SharedTaken(up.Describe(), h.Revision)
		}
	}
	st, err := events.Open(ctx, tmp, events.Options{Create: true, Projectors: projections.Projectors(), Upstream: up})
	if err != nil {
		if up != nil {
			up.Close()
		}
		return err
	}
	if err := build(st); err != nil {
		st.Close()
		return err
	}
	if err := st.Close(); err != nil {
		return fault.Wrap(fault.Storage, err, "create project database: close")
	}
	if fi, err := os.Stat(tmp + "-wal"); err == nil && fi.Size() > 0 {
		// The log is not whole in its main file: never publish it.
		return fault.New(fault.Storage, "create project database: the write-ahead log of %s was not checkpointed", tmp)
	}
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return fault.Wrap(fault.Storage, err, "create project database")
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return fault.Wrap(fault.Storage, err, "create project database: sync")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := publish(tmp, events.DBPath(dir)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fault.New(fault.SourceConflict, "create project database: %s appeared meanwhile; another init or import created it", events.DBPath(dir)).
				With("path", events.DBPath(dir)).WithHint("awr status")
		}
		return fault.Wrap(fault.Storage, err, "create project database")
	}
	syncDir(awrDir)
	return nil
}

// publish gives the file at tmp the name final, never replacing a file
// there (fs.ErrExist): a hard link, then the temporary name goes; where
// the file system has no hard links, a rename once final is found absent.
func publish(tmp, final string) error {
	err := os.Link(tmp, final)
	switch {
	case err == nil:
		os.Remove(tmp)
		return nil
	case errors.Is(err, fs.ErrExist), errors.Is(err, fs.ErrNotExist):
		return err
	}
	if _, err := os.Lstat(final); err == nil {
		return fs.ErrExist
	}
	return os.Rename(tmp, final)
}

// syncDir makes the entries of a folder durable; where a folder cannot be
// synced (some platforms) nothing more can be done.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// writeNew creates a file that must not exist yet, its content synced.
func writeNew(path string, content []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fault.New(fault.SourceConflict, "init: %s already exists; it is never overwritten", path).With("path", path)
		}
		return fault.Wrap(fault.Storage, err, "init: create %s", path)
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return fault.Wrap(fault.Storage, err, "init: write %s", path)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fault.Wrap(fault.Storage, err, "init: write %s", path)
	}
	return f.Close()
}

func appendIgnore(dir string) error {
	path := filepath.Join(dir, ".gitignore")
	old, _ := readBounded(path, maxSourceSize)
	var b strings.Builder
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteString("\n")
	}
	b.WriteString(ignoreMarker + "\n")
	for _, p := range runtimeIgnores {
		b.WriteString(p + "\n")
	}
	f, err := pathcheck.Append(path, 0o644, false) // never through a symbolic link
	if err != nil {
		return fault.Wrap(fault.Storage, err, "init: update .gitignore")
	}
	defer f.Close()
	_, err = f.WriteString(b.String())
	return err
}
