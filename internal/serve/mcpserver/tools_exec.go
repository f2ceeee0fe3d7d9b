package mcpserver

import "github.com/awr-dev/awr/internal/project"

// execTools are the read-only tools over executions and search. There
// is no awr_exec_run: it would run arbitrary commands on the server's
// machine; agents run side effects through the CLI.
var execTools = []entry{
	toolOf(tool{name: "awr_exec_list", title: "List executions", readOnly: true,
		desc: "The side effects run through `awr exec run`, oldest first, optionally of one work item or session, as `awr exec list --json`: key, purpose, argv, state (running, unknown: started with no finish recorded and its process gone, succeeded, failed), exit code, output hashes. " +
			"Read it before re-doing anything a predecessor may have done: an unknown key needs a look before `awr exec run --retry-unknown`."},
		op((*project.Project).ExecList)),
	toolOf(tool{name: "awr_exec_show", title: "Show an execution", readOnly: true,
		desc: "One execution, as `awr exec show ID --json`: command line, working directory, HEAD and dirty fingerprint before and after, exit code, duration, output hashes and sizes, where its output is kept, the execution it retries or that retried it, and for an unknown one what to do next."},
		op((*project.Project).ExecShow)),
	toolOf(tool{name: "awr_search", title: "Search the project", readOnly: true,
		desc: "Full-text search (SQLite FTS5, BM25 ranking; every word must match, a word ending in * is a prefix) over work items, checkpoints, loops, decisions, facts, hypotheses and executions, as `awr search QUERY --json`: " +
			"results with kind, ref, snippet, seq, score and the command that shows each; kind narrows to one kind, limit is 1 to 200 (default 20)."},
		op((*project.Project).Search)),
}
