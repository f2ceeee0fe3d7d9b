// Command static fails when any ELF file it is given is dynamically
// linked (has a program interpreter or a dynamic section), so CI can
// hold the release binaries to being static without ldd or file.
//
//	go run .ci/static.go BIN...
package main

import (
	"debug/elf"
	"fmt"
	"os"
)

func main() {
	bad := false
	for _, path := range os.Args[1:] {
		f, err := elf.Open(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(2)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				fmt.Fprintf(os.Stderr, "%s is dynamically linked (%s)\n", path, p.Type)
				bad = true
				break
			}
		}
		f.Close()
		if !bad {
			fmt.Printf("%s: static\n", path)
		}
	}
	if bad {
		os.Exit(1)
	}
}
