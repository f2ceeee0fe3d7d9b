// Package source parses a project's own task registers into work items,
// goals and rules: Markdown checklists, tables and heading registers, YAML
// ledgers, and goal, plan and rule files. Parsing never fails: a malformed
// or half-edited file yields what could be read plus issues naming
// path:line and the problem. The parsed result is what a source_indexed
// event carries, so reads never need the file again.
package source
