// Package source parses a project's own task registers into work items,
// goals and rules: Markdown checklists, tables and heading registers, YAML
// ledgers, and goal, plan and rule files. Parsing never fails: a malformed
// or half-edited file yields what could be read plus issues naming
// path:line and the problem. The parsed result is what a source_indexed
// event carries, so reads never need the file again.
//
// The adapters of the task tools' registers (spec-kit, Taskmaster, beads,
// GitHub issues, Jira and Linear exports, Obsidian Kanban, keyless TODO
// lists) leave the file's content hash out of their items' source
// references, so an item an edit leaves as it was stays identical and a
// reindex changes exactly the items edited.
package source
