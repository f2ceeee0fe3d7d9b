package main

import (
	"reflect"
	"strings"
	"sync"
	"unicode"
)

// Building kong's model reflects over every flag of every command and
// parses all their tags: most of what a short command costs as a process.
// So a command line that names its subcommand is parsed by a model of the
// global flags and that one subcommand (prunedCLI), and the hints are
// completed with a tree of command names alone (commandTree). A command
// line the smaller model cannot parse is parsed again by the whole one, so
// errors, help and usage read exactly as they would.

// cmdNode is a command's name, its aliases and its subcommands;
// hasDefault says one of them runs when none is named (`awr doctor`).
type cmdNode struct {
	name       string
	aliases    []string
	children   []*cmdNode
	hasDefault bool
}

// sub returns n's subcommand called name (or aliased so), or nil.
func (n *cmdNode) sub(name string) *cmdNode {
	if n == nil {
		return nil
	}
	for _, c := range n.children {
		if c.name == name {
			return c
		}
		for _, a := range c.aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

// commandTree is the tree of awr's command names, read from the CLI's
// struct tags as kong reads them (TestCommandTree compares the two).
var commandTree = sync.OnceValue(func() *cmdNode {
	return &cmdNode{name: "awr", children: commandsOf(reflect.TypeFor[CLI]())}
})

func commandsOf(t reflect.Type) []*cmdNode {
	var out []*cmdNode
	for i := range t.NumField() {
		f := t.Field(i)
		if _, ok := f.Tag.Lookup("cmd"); !ok {
			continue
		}
		n := &cmdNode{name: commandName(f)}
		if a := f.Tag.Get("aliases"); a != "" {
			n.aliases = strings.Split(a, ",")
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			n.children = commandsOf(ft)
			for j := range ft.NumField() {
				// kong's default subcommand: the parent runs it when named alone.
				if _, cmd := ft.Field(j).Tag.Lookup("cmd"); cmd && (ft.Field(j).Tag.Get("default") == "1" || ft.Field(j).Tag.Get("default") == "withargs") {
					n.hasDefault = true
				}
			}
		}
		out = append(out, n)
	}
	return out
}

// commandName is the name kong gives a command field: its name tag, else
// the field's name in lower case with a dash between its words.
func commandName(f reflect.StructField) string {
	if n := f.Tag.Get("name"); n != "" {
		return n
	}
	var b strings.Builder
	rs := []rune(f.Name)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// nounAlone returns the command args name when they name one command
// that has subcommands, none of them run by default, and nothing else but
// global flags (`awr session`, `awr --project p rig`): its help lists the
// verbs. "" otherwise.
func nounAlone(args []string) string {
	noun := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			if noun != "" {
				return ""
			}
			noun = a
			continue
		}
		name, _, hasValue := strings.Cut(a, "=")
		if !globalsWithValue[name] {
			// --json asks for JSON, not a page; any other flag is a verb's.
			return ""
		}
		if !hasValue {
			i++
		}
	}
	n := commandTree().sub(noun)
	if n == nil || len(n.children) == 0 || n.hasDefault {
		return ""
	}
	return noun
}

// globalsWithValue are the global flags whose value is the next word.
var globalsWithValue = map[string]bool{"--project": true, "--timeout": true}

// commandWord returns the first word of args that is not a global flag or
// a global flag's value: the subcommand, or "" when args hold anything
// else before it (an unknown flag, --help, --).
func commandWord(args []string) string {
	w, _ := commandWords(args)
	return w
}

// commandWords is commandWord, and the word right after it when that is
// not a flag: the subcommand of a command that has them (or an argument).
func commandWords(args []string) (first, second string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				return a, args[i+1]
			}
			return a, ""
		}
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case globalsWithValue[name]:
			if !hasValue {
				i++
			}
		case name == "--json" || name == "--version":
		default:
			return "", ""
		}
	}
	return "", ""
}

// prunedCLI returns a struct type holding CLI's global flags and its
// subcommand field called path[0] (the same tags, so kong reads the same
// flags); false when CLI has no such subcommand. When path[1] names one
// of that command's own subcommands, the command's struct is pruned the
// same way, down to that one: `awr session show` builds the model of one
// command, not of all of `session`'s.
func prunedCLI(path ...string) (reflect.Type, bool) {
	return pruned(reflect.TypeFor[CLI](), path)
}

// pruned is prunedCLI for the command struct t and the command words
// below it.
func pruned(t reflect.Type, path []string) (reflect.Type, bool) {
	var fields []reflect.StructField
	index := -1
	for i := range t.NumField() {
		f := t.Field(i)
		if _, ok := f.Tag.Lookup("cmd"); ok {
			if len(path) == 0 || commandName(f) != path[0] {
				continue
			}
			index = i
			// A command's struct is rebuilt only when it is a plain
			// group: a type made by reflect has no methods, and kong
			// would not find hooks or help the group declared.
			if len(path) > 1 && f.Type.Kind() == reflect.Struct && reflect.PointerTo(f.Type).NumMethod() == 0 {
				if sub, ok := pruned(f.Type, path[1:]); ok {
					f.Type = sub
				}
			}
		}
		fields = append(fields, f)
	}
	if index < 0 {
		return nil, false
	}
	return reflect.StructOf(fields), true
}

// fromPruned copies what kong parsed into v (a value of a prunedCLI type)
// into cli: the global flags and the subcommand field, by name, and the
// fields of a pruned command struct into the whole one.
func fromPruned(cli *CLI, v reflect.Value) {
	copyPruned(reflect.ValueOf(cli).Elem(), v.Elem())
}

func copyPruned(dst, src reflect.Value) {
	for i := range src.NumField() {
		d := dst.FieldByName(src.Type().Field(i).Name)
		if s := src.Field(i); s.Type() == d.Type() {
			d.Set(s)
		} else {
			copyPruned(d, s)
		}
	}
}
