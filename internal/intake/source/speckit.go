package source

import (
	"regexp"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/lazyre"
)

// SpecKitTasks is the adapter of spec-kit's specs/NNN-feature/tasks.md.
const SpecKitTasks = "speckit_tasks"

func init() { register(SpecKitTasks, parseSpecKit) }

var (
	// specKitKey is spec-kit's task id, T001 (T006a for one inserted later).
	specKitKey   = lazyre.New(`^T[0-9]+[a-z]?$`)
	specKitStory = lazyre.New(`^\[(US[0-9]+)\]$`)
	phaseHeading = lazyre.New(`(?i)^phase\s+[0-9]+`)
)

// parseSpecKit is the speckit_tasks adapter. It reads spec-kit's task
// lines under `## Phase N: Title` headings:
//
//	## Phase 3: User Story 1 - Create a project (Priority: P1)
//	- [ ] T012 [P] [US1] Add the project model in src/model.rs
//
// The key is the task id (T001, or what key_pattern allows); the
// checkbox gives the status ("[ ]" planned, "[x]" completed); [P] sets
// Parallel; [USn] adds the story as a tag and, the first, as the item's
// Goal (the user story speckit_spec reads from spec.md); the phase heading is the
// Group, and every task of a phase depends on every task of the phase
// before it (a phase waits for the previous one). A checkbox line of a
// phase without a task id is reported as missing_key and skipped; one
// outside the phases (a closing checklist) is not a task.
func parseSpecKit(path string, content []byte, opts Options) Result {
	d := newDoc(path, content, opts)
	if d.unreadable {
		return d.res
	}
	custom, _ := keyPatternRe(opts.KeyPattern)
	group := ""
	var prev, cur []string // keys of the previous phase and this one
	for _, l := range d.lines {
		if level, text, ok := headingOf(l); ok {
			if level <= 2 {
				if phaseHeading.MatchString(text) {
					if len(cur) > 0 {
						prev = cur
					}
					cur, group = nil, text
				} else {
					group = ""
				}
			}
			continue
		}
		li, ok := listItemOf(l)
		if !ok || li.checkbox == "" {
			continue
		}
		it, ok := d.specKitTask(li, l.n, custom)
		if !ok {
			if group != "" {
				d.issue(IssueMissingKey, l.n, "", "task %q has no task id (like T001); it is skipped", clip(li.text))
			}
			continue
		}
		it.Group = group
		if group != "" {
			for _, k := range prev {
				addDep(&it, k)
			}
			cur = append(cur, it.Key)
		}
		d.res.Items = append(d.res.Items, it)
	}
	res := unstamped(d.done())
	checkGraph(&res, path, Options{})
	return res
}

// specKitTask reads one task line: the id, [P], [USn], the description.
func (d *mdDoc) specKitTask(li listItem, n int, custom *regexp.Regexp) (events.WorkItem, bool) {
	f := strings.Fields(li.text)
	if len(f) == 0 {
		return events.WorkItem{}, false
	}
	key := strings.Trim(f[0], "*`:")
	if custom != nil && !custom.MatchString(key) || custom == nil && !specKitKey.MatchString(key) && !isKey(key) {
		return events.WorkItem{}, false
	}
	it := events.WorkItem{Key: key}
	rest := f[1:]
	for len(rest) > 0 {
		switch m := specKitStory.FindStringSubmatch(rest[0]); {
		case rest[0] == "[P]":
			it.Parallel = true
		case m != nil:
			it.Tags = append(it.Tags, m[1])
			if it.Goal == "" {
				it.Goal = m[1] // the user story of the feature's spec.md
			}
		default:
			goto title
		}
		rest = rest[1:]
	}
title:
	it.Title = strings.Join(rest, " ")
	if it.Title == "" {
		d.issue(IssueMissingTitle, n, key, "item %s has no title", key)
	}
	it.Status, it.RawStatus = d.status(li.checkbox, n, key, &it)
	it.Source = d.ref(n, n)
	return it, true
}

// SpecKitSpec is the adapter of spec-kit's specs/NNN-feature/spec.md, read
// for its goals.
const SpecKitSpec = "speckit_spec"

func init() { register(SpecKitSpec, parseSpecKitSpec) }

var (
	userStoryHeading = lazyre.New(`(?i)^user story\s+([0-9]+)\s*[-–—:]\s*(.+?)(?:\s*\(priority:\s*(p[0-9])\))?$`)
	successCriterion = lazyre.New(`^(?:\*\*)?(SC-[0-9]+)(?:\*\*)?\s*:?\s*(?:\*\*)?\s*:?\s*(.+)$`)
)

// parseSpecKitSpec is the speckit_spec adapter: the goals of a feature's
// spec.md. Each `### User Story N - Title (Priority: P1)` heading is a
// goal keyed USN (the key spec-kit's tasks tag with [USN], which become
// their Goal), its priority in the summary; each success criterion list
// line (`- **SC-001**: text`) is a goal keyed SC-001. Everything else of
// the spec is prose.
func parseSpecKitSpec(path string, content []byte, opts Options) Result {
	d := newDoc(path, content, opts)
	if d.unreadable {
		return d.res
	}
	seen := map[string]int{}
	add := func(key, title, summary string, n int) {
		if first, dup := seen[key]; dup {
			d.issue(IssueDuplicateKey, n, key, "goal key %s at line %d repeats line %d; the first is used", key, n, first)
			return
		}
		seen[key] = n
		d.res.Goals = append(d.res.Goals, events.Goal{Key: key, Title: title, Status: "active", Summary: summary,
			Source: events.SourceRef{Path: path, LineStart: n, LineEnd: n}})
	}
	for _, l := range d.lines {
		if _, text, ok := headingOf(l); ok {
			if m := userStoryHeading.FindStringSubmatch(cleanToken(text)); m != nil {
				summary := ""
				if m[3] != "" {
					summary = "priority " + strings.ToUpper(m[3])
				}
				add("US"+m[1], strings.TrimSpace(m[2]), summary, l.n)
			}
			continue
		}
		if li, ok := listItemOf(l); ok && li.checkbox == "" {
			if m := successCriterion.FindStringSubmatch(li.text); m != nil {
				add(m[1], strings.TrimSpace(m[2]), "success criterion", l.n)
			}
		}
	}
	return d.res
}
