package rig

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/pathcheck"
	"go.yaml.in/yaml/v3"
)

// Spec is a rig declared in YAML (`awr rig apply FILE`):
//
//	rig: portal
//	seats:
//	  - role: build
//	    runtime: generic
//	    command: my-agent --context {context_file}
//	    work: T-101
//	    policy: resume_if_possible
type Spec struct {
	Rig   string     `yaml:"rig"`
	Seats []SpecSeat `yaml:"seats"`
}

// SpecSeat is one seat of a Spec.
type SpecSeat struct {
	Role          string `yaml:"role"`
	Runtime       string `yaml:"runtime"`
	Command       string `yaml:"command"`
	ResumeCommand string `yaml:"resume_command"`
	Work          string `yaml:"work"`
	Cwd           string `yaml:"cwd"`
	Policy        string `yaml:"policy"`
	StopMessage   string `yaml:"stop_message"`
	// ConversationStore: see events.SeatDeclared.
	ConversationStore string `yaml:"conversation_store"`
	line              int
}

// maxSpec bounds a spec file.
const maxSpec = 1 << 20

// ParseSpec reads a rig spec. Errors name path:line.
func ParseSpec(path string, data []byte) (*Spec, error) {
	bad := func(line int, format string, args ...any) error {
		where := path
		if line > 0 {
			where = fmt.Sprintf("%s:%d", path, line)
		}
		return fault.New(fault.InvalidInput, "%s: %s", where, fmt.Sprintf(format, args...)).With("path", path).With("line", line).
			WithHint("awr rig apply --help")
	}
	if len(data) > maxSpec {
		return nil, bad(0, "the spec is larger than %d bytes", maxSpec)
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return nil, bad(0, "%s", te.Error())
		}
		return nil, bad(0, "not YAML: %v", err)
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, bad(1, "the spec must be a mapping with rig: and seats:")
	}
	doc := root.Content[0]
	spec := &Spec{}
	seen := map[string]int{}
	top := map[string]int{}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		if first, dup := top[k.Value]; dup {
			return nil, bad(k.Line, "%s is given twice (first at line %d)", k.Value, first)
		}
		top[k.Value] = k.Line
		switch k.Value {
		case "rig":
			if v.Kind != yaml.ScalarNode {
				return nil, bad(v.Line, "rig must be a name")
			}
			spec.Rig = v.Value
		case "seats":
			if v.Kind != yaml.SequenceNode {
				return nil, bad(v.Line, "seats must be a list")
			}
			for _, n := range v.Content {
				s, err := parseSeat(n, bad)
				if err != nil {
					return nil, err
				}
				if first, dup := seen[s.Role]; dup {
					return nil, bad(n.Line, "role %s is declared twice (first at line %d)", s.Role, first)
				}
				seen[s.Role] = n.Line
				spec.Seats = append(spec.Seats, s)
			}
		default:
			return nil, bad(k.Line, "unknown field %q (want rig, seats)", k.Value)
		}
	}
	if spec.Rig == "" {
		return nil, bad(1, "rig: is missing")
	}
	if _, ok := top["seats"]; !ok {
		// A spec without seats: would remove every seat of the rig; an
		// empty rig is written `seats: []`.
		return nil, bad(1, "seats: is missing (write seats: [] to remove every seat of rig %s)", spec.Rig)
	}
	if err := commands.CheckRigName(spec.Rig); err != nil {
		return nil, bad(1, "%s", err.Error())
	}
	for _, s := range spec.Seats {
		if _, err := s.request(spec.Rig).Declaration(); err != nil {
			// Keep the declaration's code (a secret is RuleViolation).
			e := fault.As(err)
			return nil, fault.New(e.Code, "%s:%d: %s", path, s.line, e.Message).With("path", path).With("line", s.line).
				WithHint("awr rig apply --help")
		}
	}
	return spec, nil
}

// parseSeat reads one seat of a spec: a mapping of known string fields,
// each given once, with a role. Errors: those bad makes, at the line of
// the fault.
func parseSeat(n *yaml.Node, bad func(line int, format string, args ...any) error) (SpecSeat, error) {
	if n.Kind != yaml.MappingNode {
		return SpecSeat{}, bad(n.Line, "each seat must be a mapping")
	}
	s := SpecSeat{line: n.Line}
	fields := map[string]*string{"role": &s.Role, "runtime": &s.Runtime, "command": &s.Command, "resume_command": &s.ResumeCommand,
		"work": &s.Work, "cwd": &s.Cwd, "policy": &s.Policy, "stop_message": &s.StopMessage,
		"conversation_store": &s.ConversationStore}
	given := map[string]int{}
	for j := 0; j+1 < len(n.Content); j += 2 {
		fk, fv := n.Content[j], n.Content[j+1]
		dst, ok := fields[fk.Value]
		if !ok {
			return SpecSeat{}, bad(fk.Line, "unknown seat field %q", fk.Value)
		}
		if first, dup := given[fk.Value]; dup {
			return SpecSeat{}, bad(fk.Line, "seat field %s is given twice (first at line %d)", fk.Value, first)
		}
		given[fk.Value] = fk.Line
		if fv.Kind != yaml.ScalarNode {
			return SpecSeat{}, bad(fv.Line, "%s must be a string", fk.Value)
		}
		*dst = fv.Value
	}
	if s.Role == "" {
		return SpecSeat{}, bad(n.Line, "seat without role")
	}
	return s, nil
}

func (s SpecSeat) request(rig string) commands.SeatRequest {
	rt := s.Runtime
	if rt == "" {
		rt = events.RuntimeGeneric
	}
	return commands.SeatRequest{Address: s.Role + "@" + rig, Runtime: rt, Command: s.Command, ResumeCommand: s.ResumeCommand,
		Work: s.Work, Cwd: s.Cwd, Policy: s.Policy, StopMessage: s.StopMessage, ConversationStore: s.ConversationStore}
}

// ApplySeat is what apply did to one seat.
type ApplySeat struct {
	Address string `json:"address"`
	// Change is created, updated, unchanged or removed.
	Change string `json:"change"`
}

// ApplyResult is `awr rig apply`.
type ApplyResult struct {
	Rig             string       `json:"rig"`
	Seats           []*ApplySeat `json:"seats"`
	ProjectRevision int64        `json:"project_revision"`
}

// Apply makes the rig's seats what the spec file says, in one transaction:
// seats are declared or redeclared, and seats of the rig the spec no
// longer lists are removed. A running seat is never removed: the whole
// apply is refused and nothing is written.
//
// The spec is read as a regular file of at most 1 MiB (pathcheck.ReadFile:
// never a FIFO or a device, and the read stops when ctx is done); each
// seat's cwd must lie in the project or a git worktree of it
// (pathcheck.WorkDir). Errors: InvalidInput naming the file (and line).
func (m *Manager) Apply(ctx context.Context, path string) (*ApplyResult, error) {
	data, err := pathcheck.ReadFile(ctx, path, maxSpec)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, pathcheck.Fault("rig apply", "", err).WithHint("awr rig apply --help")
	}
	spec, err := ParseSpec(path, data)
	if err != nil {
		return nil, err
	}
	for _, seat := range spec.Seats {
		if seat.Cwd == "" {
			continue
		}
		if _, err := pathcheck.WorkDir(m.Dir, seat.Cwd, false); err != nil {
			return nil, fault.New(fault.InvalidInput, "%s:%d: cwd %v", path, seat.line, err).With("path", path).With("line", seat.line).
				With("rule", string(pathcheck.RuleOf(err))).WithHint("awr rig apply --help")
		}
	}
	reqs := make([]commands.SeatRequest, len(spec.Seats))
	for i, seat := range spec.Seats {
		reqs[i] = seat.request(spec.Rig)
	}
	out, err := commands.ApplyRig(ctx, m.Env, spec.Rig, reqs)
	if err != nil {
		return nil, err
	}
	res := &ApplyResult{Rig: spec.Rig, ProjectRevision: out.ProjectRevision}
	for _, c := range out.Changes {
		res.Seats = append(res.Seats, &ApplySeat{Address: c[0], Change: c[1]})
	}
	return res, nil
}
