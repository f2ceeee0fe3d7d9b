// Command pair times commands as processes in paired, interleaved rounds:
// each round runs every command once, one after the other, so every
// command of a comparison sees the same state of the box. It prints the
// median, p95 and minimum wall time of each, in milliseconds.
//
//	go run ./internal/lab/bench/cmd/pair -n 40 'status-1m=awr --project /tmp/a status --json' 'status-10k=awr --project /tmp/b status --json'
//
// Each argument is NAME=COMMAND; COMMAND is split on spaces (no quoting).
// One warm-up round runs first and is not counted.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 40, "rounds counted (after one warm-up round)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: pair [-n ROUNDS] NAME=COMMAND...")
		os.Exit(2)
	}
	type cmd struct {
		name string
		argv []string
		ms   []float64
	}
	var cmds []*cmd
	for _, a := range flag.Args() {
		name, line, ok := strings.Cut(a, "=")
		argv := strings.Fields(line)
		if !ok || name == "" || len(argv) == 0 {
			fmt.Fprintf(os.Stderr, "pair: %q is not NAME=COMMAND\n", a)
			os.Exit(2)
		}
		cmds = append(cmds, &cmd{name: name, argv: argv})
	}
	for round := 0; round <= *n; round++ {
		for _, c := range cmds {
			start := time.Now()
			if out, err := exec.Command(c.argv[0], c.argv[1:]...).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "pair: %s: %v\n%s", c.name, err, out)
				os.Exit(1)
			}
			if round > 0 {
				c.ms = append(c.ms, float64(time.Since(start).Microseconds())/1000)
			}
		}
	}
	for _, c := range cmds {
		slices.Sort(c.ms)
		k := len(c.ms)
		p50 := (c.ms[(k-1)/2] + c.ms[k/2]) / 2
		p95 := c.ms[max(0, (k*95+99)/100-1)]
		fmt.Printf("%-16s p50 %8.2f  p95 %8.2f  min %8.2f ms\n", c.name, p50, p95, c.ms[0])
	}
}
