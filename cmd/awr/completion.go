package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/awr-dev/awr/internal/project"
)

type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

// Run prints the completion script of one shell.
func (c *completionCmd) Run(app *App) error {
	_, err := io.WriteString(app.Stdout, completionScripts[c.Shell])
	return err
}

// completionScripts are the scripts `awr completion SHELL` prints: each
// asks `awr __complete -- WORD...` for the candidates of the word under
// the cursor (the last one, "" when it is empty).
var completionScripts = map[string]string{
	"bash": `# awr completion for bash: source <(awr completion bash)
_awr_complete() {
    local IFS=$'\n'
    COMPREPLY=($(awr __complete -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _awr_complete awr
`,
	"zsh": `#compdef awr
# awr completion for zsh: source <(awr completion zsh) after compinit
_awr() {
    local -a cands
    cands=("${(@f)$(awr __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    cands=(${cands:#})
    if (( ${#cands} )); then
        compadd -Q -S ' ' -a cands
    else
        _files
    fi
}
compdef _awr awr
`,
	"fish": `# awr completion for fish: awr completion fish | source
function __awr_complete
    set -l cur (commandline -ct)
    awr __complete -- (commandline -opc)[2..-1] "$cur" 2>/dev/null
end
complete -c awr -f -a '(__awr_complete)'
`,
}

type completeCmd struct {
	Words []string `arg:"" optional:"" passthrough:"" help:"The words after awr, the last one being completed."`
}

// Run prints the candidates for the last word, one a line.
func (c *completeCmd) Run(app *App) error {
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("awr"), kong.Exit(func(int) {}))
	if err != nil {
		return err
	}
	enumPlaceholders(parser.Model.Node)
	words := c.Words
	if len(words) > 0 && words[0] == "--" {
		words = words[1:]
	}
	for _, cand := range completeWords(parser.Model.Node, words, projectValues(app, words)) {
		fmt.Fprintln(app.Stdout, cand)
	}
	return nil
}

// projectValues returns the dynamic values of the project the words name
// (with --project) or the one found from here: work keys for "work",
// session ids for "session". It opens the project only when asked, and a
// missing project has none.
func projectValues(app *App, words []string) func(kind string) []string {
	dir := projectArg(words)
	if dir == "" {
		dir = os.Getenv("AWR_PROJECT")
	}
	return func(kind string) []string {
		if wd, err := os.Getwd(); dir == "" && (err != nil || project.Find(wd) == "") {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		p, err := project.Open(ctx, dir, project.Options{Now: time.Now, LockTimeout: time.Second})
		if err != nil {
			return nil
		}
		defer p.Close()
		var out []string
		switch kind {
		case "work":
			res, err := p.Ready(ctx, project.ReadyRequest{All: true})
			if err != nil {
				return nil
			}
			for _, it := range res.Ready {
				out = append(out, it.Key)
			}
			if res.NotReady != nil {
				for _, it := range *res.NotReady {
					out = append(out, it.Key)
				}
			}
		case "session":
			// The ids alone, as the sessions are read (a long log has
			// tens of thousands).
			if _, err := p.SessionListEach(ctx, project.SessionListRequest{All: true}, func(s project.SessionEntry) error {
				out = append(out, s.ID)
				return nil
			}); err != nil {
				return nil
			}
		}
		return out
	}
}

// valueKind says which of the project's values a flag or argument takes.
func valueKind(name string) string {
	switch name {
	case "work":
		return "work"
	case "session", "from-session":
		return "session"
	}
	return ""
}

// completeWords returns the candidates for the last of words (the words
// after awr) on the command tree under root: subcommands, flags (the
// command's and the global ones), a flag's enum values, and the
// project's work keys and session ids (from values).
func completeWords(root *kong.Node, words []string, values func(kind string) []string) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	before := words[:len(words)-1]
	node := root
	var pending *kong.Flag // a flag whose value is the next word
	args := 0              // positional arguments given to node
	for _, w := range before {
		switch {
		case pending != nil:
			if w != "=" { // bash splits --flag=value at the "="
				pending = nil
			}
		case w == "--":
		case strings.HasPrefix(w, "-"):
			name, _, hasValue := strings.Cut(w, "=")
			if f := lastFlag(node, name); f != nil && !f.IsBool() && !hasValue {
				pending = f
			}
		default:
			if c := child(node, w); c != nil && args == 0 {
				node = c
				continue
			}
			args++
		}
	}
	if pending != nil {
		if cur == "=" {
			cur = ""
		}
		return matches(flagValues(pending, values), cur)
	}
	if name, val, ok := strings.Cut(cur, "="); ok && strings.HasPrefix(name, "--") {
		var out []string
		for _, v := range matches(flagValues(lastFlag(node, name), values), val) {
			out = append(out, name+"="+v)
		}
		return out
	}
	if strings.HasPrefix(cur, "-") {
		var out []string
		for n := node; n != nil; n = n.Parent {
			for _, f := range n.Flags {
				if !f.Hidden {
					out = append(out, "--"+f.Name)
				}
			}
		}
		out = append(out, "--help")
		return matches(out, cur)
	}
	var out []string
	if args == 0 {
		for _, c := range node.Children {
			if c.Type == kong.CommandNode && !c.Hidden {
				out = append(out, c.Name)
			}
		}
	}
	if args < len(node.Positional) {
		p := node.Positional[args]
		out = append(out, p.EnumSlice()...)
		if k := valueKind(p.Name); k != "" {
			out = append(out, values(k)...)
		}
	}
	return matches(out, cur)
}

// lastFlag returns the flag called --name (or -x) of node or of the
// commands above it.
func lastFlag(node *kong.Node, name string) *kong.Flag {
	for n := node; n != nil; n = n.Parent {
		for _, f := range n.Flags {
			if "--"+f.Name == name || f.Short != 0 && "-"+string(f.Short) == name {
				return f
			}
		}
	}
	return nil
}

// flagValues returns the values a flag takes: its enum, or the project's.
func flagValues(f *kong.Flag, values func(kind string) []string) []string {
	if f == nil {
		return nil
	}
	var out []string
	for _, v := range f.EnumSlice() {
		if v != "" {
			out = append(out, v)
		}
	}
	if k := valueKind(f.Name); k != "" {
		out = append(out, values(k)...)
	}
	return out
}

// matches returns the candidates that start with prefix, sorted, once each.
func matches(cands []string, prefix string) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cands {
		if c != "" && strings.HasPrefix(c, prefix) && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}
