package intake

import (
	"fmt"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/secret"
)

// IssueSecretWithheld is the source issue of a value that looked like a
// secret and was withheld from the log.
const IssueSecretWithheld = "secret_withheld"

// withholdSecrets puts the text of a parsed source through the secret
// check CLI fields get: a value that looks like a credential is replaced
// by "[withheld: KIND]" before it can enter the immutable log, and an
// issue names where it was (path:line, the field) and its kind, never the
// value. Issue messages are checked too, since they can quote a line.
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
	for i := range si.Items {
		it := &si.Items[i]
		for _, f := range []struct {
			name string
			v    *string
		}{{"title", &it.Title}, {"summary", &it.Summary}, {"next_action", &it.NextAction}, {"blocker", &it.Blocker},
			{"owner", &it.Owner}, {"milestone", &it.Milestone}, {"raw_status", &it.RawStatus}} {
			withhold(f.v, it.Source, it.Key, f.name)
		}
		for j := range it.Acceptance {
			withhold(&it.Acceptance[j], it.Source, it.Key, fmt.Sprintf("acceptance[%d]", j))
		}
	}
	for i := range si.Goals {
		g := &si.Goals[i]
		withhold(&g.Title, g.Source, g.Key, "title")
		withhold(&g.Summary, g.Source, g.Key, "summary")
	}
	for i := range si.Rules {
		withhold(&si.Rules[i].Text, si.Rules[i].Source, si.Rules[i].Key, "text")
	}
	for i := range si.Issues {
		is := &si.Issues[i]
		if f, ok := secret.Find(is.Message); ok && is.Code != IssueSecretWithheld {
			is.Message = "[withheld: the message quoted text that looks like a secret (" + f.Kind + ")]"
		}
	}
}
