package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

// The page `awr`, `awr help` and `awr --help` print: the commands grouped
// by what a person is doing, one line each, in at most 60 lines of 80
// columns (TestRootHelp). A command's own page (`awr session --help`,
// `awr help session`) is kong's, with its verbs and flags.

// helpGroup is one heading of the root page and its commands in order.
type helpGroup struct {
	title string
	cmds  [][2]string // name, one line
}

var helpGroups = []helpGroup{
	{"Start a project", [][2]string{
		{"init", "Preview the project's task files, then index them (--accept)"},
		{"status", "Where the project stands, and the next command"},
		{"source", "Add, reindex and list the task files awr reads"},
		{"intake", "How organized the project is; what to do before work starts"},
		{"doctor", "What keeps the project from continuing, and its repair"},
		{"demo", "A scripted handoff on a temporary project"},
	}},
	{"Do the work", [][2]string{
		{"ready", "The work that can be claimed now"},
		{"work", "One work item: show, history, claim, hand off, complete"},
		{"session", "Start, checkpoint, end, resume, show and list sessions"},
		{"claim", "Acquire, renew or release a session's claim"},
		{"context", "Compile the context packet for a work item"},
		{"evidence", "Record evidence against a work item's acceptance criteria"},
		{"exec", "Run a side effect at most once per work item and key"},
		{"search", "Full-text search over work, checkpoints and knowledge"},
	}},
	{"Hand off and recover", [][2]string{
		{"recovery", "Where a session stands and what to run next"},
		{"client", "Bind host conversations; install awr's hooks in a host"},
		{"mcp", "Serve awr's tools to an agent host over MCP (stdio)"},
	}},
	{"Rigs of agents", [][2]string{
		{"seat", "Declare, show and list seats (ROLE@RIG)"},
		{"rig", "Bring a rig of seats up in tmux, down with a snapshot"},
	}},
	{"Read the log and audit", [][2]string{
		{"log", "The events, oldest first, filtered (--follow: as they commit)"},
		{"diff", "What changed in the read models between two revisions"},
		{"ui", "A read-only web page of the log, on loopback"},
		{"audit", "The chain-of-custody report of a session chain or work item"},
		{"verify", "Check the hash chain and the read models (--anchors)"},
		{"anchor", "Record the log's head outside the database"},
	}},
	{"Teams and replicas", [][2]string{
		{"migrate", "Move the log into a shared PostgreSQL database, or back"},
		{"export", "Write the whole log as JSONL"},
		{"import", "Import a JSONL export into an empty project (a replica)"},
		{"fork", "Turn an imported replica into a project of its own"},
	}},
	{"Maintenance", [][2]string{
		{"replay", "Rebuild every read model from the log (--verify: compare)"},
		{"bench", "Measure awr on a synthetic project"},
		{"completion", "Print a shell completion script (bash, zsh, fish)"},
		{"version", "Print the version"},
	}},
}

// helpPrinter prints the grouped page for the root and kong's page for a
// command.
func helpPrinter(options kong.HelpOptions, ctx *kong.Context) error {
	if ctx.Selected() != nil {
		return kong.DefaultHelpPrinter(options, ctx)
	}
	return rootHelp(ctx.Stdout, ctx.Model.Node)
}

// rootHelp writes the grouped page. A visible command missing from
// helpGroups is listed under "Other", so none is ever left out.
func rootHelp(w io.Writer, root *kong.Node) error {
	visible := map[string]bool{}
	for _, c := range root.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			visible[c.Name] = true
		}
	}
	groups := helpGroups
	listed := map[string]bool{}
	for _, g := range groups {
		for _, c := range g.cmds {
			listed[c[0]] = true
		}
	}
	var other [][2]string
	for _, c := range root.Children {
		if visible[c.Name] && !listed[c.Name] {
			other = append(other, [2]string{c.Name, firstSentence(c.Help)})
		}
	}
	if len(other) > 0 {
		groups = append(append([]helpGroup{}, groups...), helpGroup{"Other", other})
	}
	var b strings.Builder
	b.WriteString("Usage: awr <command> [flags]\n\n")
	b.WriteString("awr keeps coding agents' work continuous across interruptions.\n")
	for _, g := range groups {
		fmt.Fprintf(&b, "\n%s:\n", g.title)
		for _, c := range g.cmds {
			if visible[c[0]] {
				fmt.Fprintf(&b, "  %-11s %s\n", c[0], c[1])
			}
		}
	}
	b.WriteString("\nFlags: --project=PATH (default: the nearest directory holding .awr/),\n")
	b.WriteString("  --json, --timeout=30s, --color=auto|always|never, --wide, --version, -h/--help\n\n")
	b.WriteString("awr COMMAND --help (or awr help COMMAND) shows a command's verbs and flags;\n")
	b.WriteString("docs/commands.md has every command with its output.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// firstSentence is help's text up to its first full stop.
func firstSentence(help string) string {
	if i := strings.Index(help, ". "); i >= 0 {
		return help[:i]
	}
	return strings.TrimSuffix(help, ".")
}
