package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/replay"
)

type exportCmd struct {
	atFlag
	Output string `short:"o" help:"Write to FILE instead of stdout (written to a temporary file, then renamed)." placeholder:"FILE" type:"path"`
}

// Run exports the log.
func (c *exportCmd) Run(app *App) error {
	st, err := app.Store()
	if err != nil {
		return err
	}
	rev, err := c.rev()
	if err != nil {
		return err
	}
	if c.Output == "" {
		if app.JSON {
			return fault.New(fault.Usage, "export: --json needs --output FILE (stdout carries the JSONL)").WithHint("awr export --output FILE --json")
		}
		w := bufio.NewWriter(app.Stdout)
		if _, err := replay.Export(app.Ctx, st, w, rev); err != nil {
			return err
		}
		return w.Flush()
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.Output), ".awr-export-*")
	if err != nil {
		return fault.Wrap(fault.Storage, err, "export: create %s", c.Output)
	}
	defer os.Remove(tmp.Name())
	res, err := replay.Export(app.Ctx, st, tmp, rev)
	if err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fault.Wrap(fault.Storage, err, "export: write %s", c.Output)
	}
	if err := tmp.Close(); err != nil {
		return fault.Wrap(fault.Storage, err, "export: write %s", c.Output)
	}
	if err := os.Rename(tmp.Name(), c.Output); err != nil {
		return fault.Wrap(fault.Storage, err, "export: write %s", c.Output)
	}
	res.Output = c.Output
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "exported %d events to %s (head hash %s)\n", res.Events, c.Output, res.HeadHash)
	})
}

type importCmd struct {
	File string `arg:"" help:"JSONL export to import ('-' for stdin)." type:"path"`
}

// Run imports a log into an empty project.
func (c *importCmd) Run(app *App) error {
	var r io.Reader = os.Stdin
	name := "stdin"
	if c.File != "-" && c.File != "" {
		f, err := os.Open(c.File)
		if err != nil {
			return fault.New(fault.InvalidInput, "import: cannot read %s: %v", c.File, errors.Unwrap(err)).With("path", c.File).WithHint("awr export --output FILE")
		}
		defer f.Close()
		r, name = f, c.File
	}
	dir, err := app.projectDir()
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fault.New(fault.InvalidInput, "import: --project %s is not a directory", dir).With("path", dir).WithHint("mkdir -p %s", dir)
	}
	_, dirErr := os.Stat(filepath.Join(dir, ".awr"))
	_, dbErr := os.Stat(events.DBPath(dir))
	newDir, newDB := os.IsNotExist(dirErr), os.IsNotExist(dbErr)
	st, err := app.open(true)
	if err != nil {
		return err
	}
	res, err := replay.Import(app.Ctx, st, bufio.NewReaderSize(r, 1<<16), name)
	if err != nil {
		// Leave no half-made project behind: remove what this import created.
		app.close()
		app.store = nil
		if newDB {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(events.DBPath(dir) + suffix)
			}
		}
		if newDir {
			os.RemoveAll(filepath.Join(dir, ".awr"))
		}
		return err
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "imported %d events, chain verified (project_revision %d, head hash %s)\n", res.Events, res.ProjectRevision, res.HeadHash)
		fmt.Fprintln(w, "next: awr status")
	})
}
