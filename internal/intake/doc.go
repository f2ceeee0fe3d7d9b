// Package intake finds a project's work in the files the team already
// keeps and maps them to source adapters: discovery (the inventory of task
// registers, ledgers, goals, plans and rules), the manifest
// (.awr/project.toml), reading and hashing sources, detecting changed
// files, what the last reindex changed (read back from the log, for
// awr status), and the organization report that says what is missing
// before work can start. The team's files stay authoritative: intake reads them and
// never rewrites them.
package intake
