// Package audit holds the chain-of-custody report of one session chain or
// one work item (`awr audit`): its data, gathered from the log (Gather:
// a first pass finds the session chain, a second collects every event of
// the subject), and its two renderings, Markdown and a self-contained HTML page.
//
// A report is a pure function of the log up to its revision: it carries no
// wall-clock time, no path of the machine it was made on and no map
// order, so two auditors who run `awr audit --at REV` on the same log get
// the same bytes. Every entry names the event it comes from (seq, hash and
// the event's own time, in UTC), so it can be found with `awr log`.
package audit
