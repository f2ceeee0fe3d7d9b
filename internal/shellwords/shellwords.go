// Package shellwords splits command lines into words as sh would, with one
// splitter in two modes. Split reads a command line printed as a hint,
// for the quoting awr's hints use: '...' and "..." without escapes
// inside; the hint runner of the test build (cmd/awr/hintrun_awrtest.go)
// and the test that parses every hint in the code
// (cmd/awr/hintsource_test.go) read hints with it. Command reads any
// command line a host runs (backslash escapes included): internal/hosts
// decides with it whether a hook in a host's settings is awr's, and which
// binary it runs. Quote is the other way: one word written so that sh
// reads it back as it was, for the commands awr prints (hints) and the
// commands it has a shell run (a rig's agents).
package shellwords

// Split returns the words of s, read the way awr prints a hint: quotes
// group words, and a backslash is an ordinary character (hints never
// escape one). It is Command's splitter without backslash escapes.
func Split(s string) []string {
	return command(s, false)
}
