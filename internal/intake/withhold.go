package intake

import (
	"fmt"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/secret"
)

// IssueSecretWithheld is the source issue of a value that looked like a
// secret and was withheld from the log.
const IssueSecretWithheld = "secret_withheld"

// withheldInSource replaces a secret in a source's text before it is
// parsed, so that no part of it can reach a parsed field, whichever way
// the parser cuts a line (a dependency list can take the name of an
// assignment as a key and leave its value in the title).
const withheldInSource = "withheld-secret"

// withholdInContent returns content with every secret (secret.Spans)
// replaced by withheldInSource, followed by as many newlines as the
// secret spanned, so every later line keeps its number; and an issue per
// secret naming the source's path, the line and the kind, never the
// value, with the kinds in the same order. The marker is one plain word so that a YAML or Markdown source
// still parses around it. Content without a secret is returned as it is.
func withholdInContent(path string, content []byte) ([]byte, []events.SourceIssue, []string) {
	text := string(content)
	spans := secret.Spans(text)
	if spans == nil {
		return content, nil, nil
	}
	var b strings.Builder
	var issues []events.SourceIssue
	var kinds []string
	at := 0
	for _, sp := range spans {
		b.WriteString(text[at:sp.From])
		b.WriteString(withheldInSource)
		b.WriteString(strings.Repeat("\n", strings.Count(text[sp.From:sp.To], "\n")))
		issues = append(issues, events.SourceIssue{Code: IssueSecretWithheld, Path: path, Line: 1 + strings.Count(text[:sp.From], "\n"),
			Message: fmt.Sprintf("line %d holds what looks like a %s; it was not indexed", 1+strings.Count(text[:sp.From], "\n"), sp.Kind)})
		kinds = append(kinds, sp.Kind)
		at = sp.To
	}
	b.WriteString(text[at:])
	return []byte(b.String()), issues, kinds
}

// itemTexts returns every text field of a work item but its key, for the
// withholding steps that look at each one.
func itemTexts(it *events.WorkItem) []*string {
	out := []*string{&it.Title, &it.Summary, &it.NextAction, &it.Blocker, &it.Owner, &it.Milestone, &it.RawStatus, &it.Kind, &it.Priority, &it.Goal}
	for j := range it.Acceptance {
		out = append(out, &it.Acceptance[j])
	}
	for j := range it.DependsOn {
		out = append(out, &it.DependsOn[j].Key)
	}
	for j := range it.Tags {
		out = append(out, &it.Tags[j])
	}
	for j := range it.Paths {
		out = append(out, &it.Paths[j])
	}
	return out
}

// attachWithheld ties each issue withholdInContent made to the item whose
// lines hold it: the issue names the item's key, and the marker in the
// item's fields says which kind of secret was withheld ("[withheld:
// KIND]", as a field's own check writes it).
func attachWithheld(si *events.SourceIndexed, withheld []events.SourceIssue, kinds []string) {
	for i, is := range withheld {
		for k := range si.Items {
			it := &si.Items[k]
			if is.Line < it.Source.LineStart || is.Line > max(it.Source.LineEnd, it.Source.LineStart) {
				continue
			}
			withheld[i].Key = it.Key
			for _, f := range itemTexts(it) {
				if strings.Contains(*f, withheldInSource) {
					*f = strings.Replace(*f, withheldInSource, "[withheld: "+kinds[i]+"]", 1)
					break
				}
			}
			break
		}
	}
}

// withholdSecrets puts the text of a parsed source through the secret
// check CLI fields get: a value that looks like a credential is replaced
// by "[withheld: KIND]" before it can enter the immutable log, and an
// issue names where it was (path:line, the field) and its kind, never the
// value. A key is an identity, so an item, goal or rule whose key looks
// like a secret is not indexed at all (an issue names its line); a
// dependency on such a key is kept with the key withheld, so the item
// still waits on something the register does not resolve rather than
// becoming ready. Issue messages are checked too, since they can quote a
// line.
func withholdSecrets(si *events.SourceIndexed) {
	withhold := func(v *string, ref events.SourceRef, key, field string) {
		f, ok := secret.Find(*v)
		if !ok {
			return
		}
		*v = "[withheld: " + f.Kind + "]"
		si.Issues = append(si.Issues, events.SourceIssue{Code: IssueSecretWithheld, Path: si.Path, Line: ref.LineStart, Key: key,
			Message: fmt.Sprintf("%s of %s looks like a secret (%s); its value was not indexed", field, key, f.Kind)})
	}
	withholdEach := func(list []string, ref events.SourceRef, key, name string) []string {
		list = append([]string(nil), list...)
		for j := range list {
			withhold(&list[j], ref, key, fmt.Sprintf("%s[%d]", name, j))
		}
		return list
	}
	dropped := func(what string, ref events.SourceRef, f secret.Finding) {
		si.Issues = append(si.Issues, events.SourceIssue{Code: IssueSecretWithheld, Path: si.Path, Line: ref.LineStart,
			Message: fmt.Sprintf("the key of the %s at line %d looks like a secret (%s); the %s was not indexed", what, ref.LineStart, f.Kind, what)})
	}
	items := si.Items[:0]
	for _, it := range si.Items {
		if f, ok := secret.Find(it.Key); ok {
			dropped("item", it.Source, f)
			continue
		}
		if strings.Contains(it.Key, withheldInSource) {
			dropped("item", it.Source, secret.Finding{Kind: "secret"})
			continue
		}
		for _, f := range []struct {
			name string
			v    *string
		}{{"title", &it.Title}, {"summary", &it.Summary}, {"next_action", &it.NextAction}, {"blocker", &it.Blocker},
			{"owner", &it.Owner}, {"milestone", &it.Milestone}, {"raw_status", &it.RawStatus}, {"kind", &it.Kind},
			{"priority", &it.Priority}, {"goal", &it.Goal}} {
			withhold(f.v, it.Source, it.Key, f.name)
		}
		it.Acceptance = withholdEach(it.Acceptance, it.Source, it.Key, "acceptance")
		it.DependsOn = append([]events.Dependency(nil), it.DependsOn...)
		for j := range it.DependsOn {
			withhold(&it.DependsOn[j].Key, it.Source, it.Key, fmt.Sprintf("depends_on[%d]", j))
		}
		it.Tags = withholdEach(it.Tags, it.Source, it.Key, "tags")
		it.Paths = withholdEach(it.Paths, it.Source, it.Key, "paths")
		items = append(items, it)
	}
	si.Items = items
	si.Goals = keepKeyed(si.Goals, func(g events.Goal) (string, events.SourceRef) { return g.Key, g.Source },
		func(ref events.SourceRef, f secret.Finding) { dropped("goal", ref, f) },
		func(g *events.Goal) {
			withhold(&g.Title, g.Source, g.Key, "title")
			withhold(&g.Summary, g.Source, g.Key, "summary")
			withhold(&g.Status, g.Source, g.Key, "status")
		})
	si.Rules = keepKeyed(si.Rules, func(r events.Rule) (string, events.SourceRef) { return r.Key, r.Source },
		func(ref events.SourceRef, f secret.Finding) { dropped("rule", ref, f) },
		func(r *events.Rule) {
			withhold(&r.Text, r.Source, r.Key, "text")
			r.Paths = withholdEach(r.Paths, r.Source, r.Key, "paths")
		})
	for i := range si.Issues {
		is := &si.Issues[i]
		if f, ok := secret.Find(is.Message); ok && is.Code != IssueSecretWithheld {
			is.Message = "[withheld: the message quoted text that looks like a secret (" + f.Kind + ")]"
		}
		if f, ok := secret.Find(is.Key); ok {
			is.Key = "[withheld: " + f.Kind + "]"
		}
	}
}

// keepKeyed keeps, in place, the records of recs whose key (keyOf) looks
// like no secret, each passed through clean; each other record is passed
// to drop with its source and what the key looked like.
func keepKeyed[T any](recs []T, keyOf func(T) (string, events.SourceRef), drop func(events.SourceRef, secret.Finding), clean func(*T)) []T {
	out := recs[:0]
	for _, r := range recs {
		key, ref := keyOf(r)
		if f, ok := secret.Find(key); ok {
			drop(ref, f)
			continue
		}
		clean(&r)
		out = append(out, r)
	}
	return out
}
