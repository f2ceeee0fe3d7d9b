package replay

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"zombiezen.com/go/sqlite"
)

// ExportResult reports an export.
type ExportResult struct {
	ProjectRevision int64  `json:"project_revision"`
	Events          int64  `json:"events"`
	HeadHash        string `json:"head_hash"`
	Output          string `json:"output,omitempty"`
}

// Export writes events 1..upTo (the head when upTo < 0) to w as JSONL: one
// envelope per line, with its payload and hashes.
func Export(ctx context.Context, store *events.Store, w io.Writer, upTo int64) (*ExportResult, error) {
	return ExportWith(ctx, store, w, upTo, nil)
}

// progressEvery is how many events a long job handles between two calls
// of its progress callback (the rebuild's own step, events.fold).
const progressEvery = 4096

// ExportWith is Export that reports, when progress is not nil, the events
// written of the ones to write (done, total), every few thousand and at
// the end. Errors: those of Export.
func ExportWith(ctx context.Context, store *events.Store, w io.Writer, upTo int64, progress func(done, total int64)) (*ExportResult, error) {
	res := &ExportResult{}
	bw := bufio.NewWriterSize(w, 1<<16)
	err := store.ReadBulk(ctx, func(r *events.Reader) error {
		to := r.Head
		if upTo >= 0 {
			if upTo > r.Head {
				return fault.New(fault.InvalidInput, "--at %d is beyond project_revision %d", upTo, r.Head).
					With("at", upTo).With("project_revision", r.Head).WithHint("awr status")
			}
			to = upTo
		}
		res.ProjectRevision = to
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false)
		return events.ScanEvents(r.Conn, 1, to, func(e *events.Event) error {
			line.Reset()
			if err := enc.Encode(e.ToEnvelope()); err != nil {
				return err
			}
			if n := line.Len() - 1; n > events.MaxEventBytes {
				// Written before the cap: import would refuse the file, so
				// no file is written; the log up to the event before it
				// still exports.
				return fault.New(fault.Storage, "export: seq %d (%s) is %d bytes as a line, more than the %d import accepts; the export would not import", e.Seq, e.Kind, n, events.MaxEventBytes).
					With("seq", e.Seq).With("bytes", n).With("max", events.MaxEventBytes).WithHint("awr export --at %d --output BEFORE.jsonl", e.Seq-1)
			}
			if _, err := bw.Write(line.Bytes()); err != nil {
				return fault.Wrap(fault.Storage, err, "export: write")
			}
			res.Events++
			res.HeadHash = fmt.Sprintf("%x", e.Hash)
			if progress != nil && (res.Events%progressEvery == 0 || res.Events == to) {
				progress(res.Events, to)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, fault.Wrap(fault.Storage, err, "export: write")
	}
	return res, nil
}

// ImportResult reports an import.
type ImportResult struct {
	ProjectRevision int64  `json:"project_revision"`
	Events          int64  `json:"events"`
	HeadHash        string `json:"head_hash"`
	// Origin is what an import into a project records: the project the
	// copy is a replica of (nil for a plain Import).
	Origin *events.Origin `json:"origin,omitempty"`
}

// maxLine bounds one JSONL line: the cap every event was written under
// (events.MaxEventBytes; a large source is indexed in parts), plus room
// for a CR before the newline.
const maxLine = events.MaxEventBytes + 1

// Import reads a JSONL export into an empty project, verifying the chain as
// it reads, and applies the projections, all in one transaction: a broken
// file leaves the project exactly as it was.
// Errors: InvalidTransition when the project already has events;
// InvalidInput naming the line (source:line) for malformed JSON, unknown
// fields, a seq gap, a prev_hash or hash that does not match, or a stream
// version out of order.
func Import(ctx context.Context, store *events.Store, r io.Reader, source string) (*ImportResult, error) {
	return importLog(ctx, store, r, source, time.Time{}, nil, nil)
}

// ImportReplica is Import that also records, in the same transaction, that
// the project is a replica of the log it imported (events.Origin: the
// project id of its project_initialized event, its head, importedAt), so
// that every later write is refused until the copy is forked. Errors: those
// of Import.
func ImportReplica(ctx context.Context, store *events.Store, r io.Reader, source string, importedAt time.Time) (*ImportResult, error) {
	return importLog(ctx, store, r, source, importedAt, nil, nil)
}

// Witness checks an imported log against what lies outside it (anchors)
// inside the import's transaction, once every event is appended: conn
// holds them, head is the last seq. An error refuses the import.
type Witness func(conn *sqlite.Conn, head int64) error

// ImportWitnessed is ImportReplica checked by witness: the events are
// appended (their chain checked line by line) and witness judges the whole
// log before anything commits. A log that breaks a domain rule is still
// refused, but the witness speaks first: its refusal (a rewrite an anchor
// names) is returned in place of the first domain fault, which it
// explains. progress, when not nil, is told the events appended so far,
// every few thousand and at the end (the caller knows, or not, how many
// the file holds: LastSeq). Errors: those of Import, and witness's.
func ImportWitnessed(ctx context.Context, store *events.Store, r io.Reader, source string, importedAt time.Time, witness Witness, progress func(done int64)) (*ImportResult, error) {
	return importLog(ctx, store, r, source, importedAt, witness, progress)
}

func importLog(ctx context.Context, store *events.Store, r io.Reader, source string, importedAt time.Time, witness Witness, progress func(done int64)) (*ImportResult, error) {
	res := &ImportResult{}
	// The origin is the project the log is at its head: a copy of a fork
	// is a replica of the fork, not of the fork's own origin.
	var lineage events.Lineage
	_, err := store.Write(ctx, events.WriteOptions{Now: time.Now(), Entropy: rand.Reader, Actor: "import", Bulk: true}, func(tx *events.Tx) (any, error) {
		if tx.Head() != 0 {
			return nil, fault.New(fault.InvalidTransition, "import: project already has %d events; import needs an empty project", tx.Head()).
				With("project_revision", tx.Head()).WithHint("awr import FILE --project EMPTY_DIR")
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 1<<16), maxLine+1)
		line := 0
		rules := events.NewInvariants(time.Now())
		// With a witness, the first domain fault is held while the rest is
		// appended, so that the witness can name the rewrite behind it.
		var ruleFault error
		for sc.Scan() {
			line++
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			text := bytes.TrimSpace(sc.Bytes())
			if len(text) == 0 {
				continue
			}
			if len(text) > events.MaxEventBytes {
				return nil, lineErr(source, line, fmt.Errorf("line longer than %d bytes, the most an event may be", events.MaxEventBytes))
			}
			e, err := DecodeEnvelopeLine(text)
			if err != nil {
				return nil, lineErr(source, line, err)
			}
			if err := tx.AppendRaw(e); err != nil {
				return nil, lineErr(source, line, err)
			}
			v, err := events.Decode(e)
			if err != nil {
				return nil, lineErr(source, line, fmt.Errorf("seq %d: payload does not decode: %v", e.Seq, err))
			}
			// Checked once the line is known to continue the chain, so a
			// spliced or edited log is named by its chain fault first.
			if ruleFault == nil {
				if problem := rules.Check(e, v); problem != "" {
					ruleFault = lineErr(source, line, fmt.Errorf("seq %d: %s", e.Seq, problem))
					if witness == nil {
						return nil, ruleFault
					}
				}
			}
			lineage.Fold(e, v)
			res.Events++
			res.HeadHash = fmt.Sprintf("%x", e.Hash)
			if progress != nil && res.Events%progressEvery == 0 {
				progress(res.Events)
			}
		}
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				return nil, lineErr(source, line+1, fmt.Errorf("line longer than %d bytes, the most an event may be", events.MaxEventBytes))
			}
			return nil, fault.Wrap(fault.Storage, err, "import: read %s", source)
		}
		if progress != nil {
			progress(res.Events)
		}
		if res.Events == 0 {
			return nil, fault.New(fault.InvalidInput, "import: %s holds no events", source).WithHint("awr export --project SOURCE_DIR --output FILE")
		}
		res.ProjectRevision = tx.Head()
		if witness != nil {
			if err := witness(tx.Conn, tx.Head()); err != nil {
				return nil, err
			}
		}
		if ruleFault != nil {
			return nil, ruleFault
		}
		if !importedAt.IsZero() {
			o := events.Origin{ProjectID: lineage.Current(), HeadSeq: tx.Head(), HeadHash: res.HeadHash, ImportedAt: importedAt.UnixMilli()}
			if err := tx.RecordOrigin(o); err != nil {
				return nil, err
			}
			res.Origin = &o
		}
		return res, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func lineErr(source string, line int, err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "append event: ")
	return fault.New(fault.InvalidInput, "import: %s:%d: %s; nothing was imported", source, line, msg).
		With("path", source).With("line", line).WithHint("awr export --project SOURCE_DIR --output FILE")
}

// DecodeEnvelopeLine parses one JSONL export line into an event, rejecting
// unknown fields and malformed values. It checks the envelope's shape, not
// its place in the chain.
func DecodeEnvelopeLine(line []byte) (*events.Event, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var env events.Envelope
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("not a valid envelope: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not a valid envelope: trailing data")
	}
	return events.FromEnvelope(env)
}

// lastSeqReach is how far from its end LastSeq reads a file for its last
// line's start.
const lastSeqReach = 1 << 20

// LastSeq is the seq of an export's last line, read from its end (at
// most the last MiB, whatever the file's size): the number of events an
// import of it appends, known before the import reads a line, so that
// its progress has a total. It says false when the file does not end
// with a line that begins as an export's envelope does ({"seq":N), and
// nothing then rests on it: the import checks every line.
func LastSeq(r io.ReaderAt, size int64) (int64, bool) {
	var tail []byte
	for off := size; off > 0 && int64(len(tail)) < lastSeqReach; {
		n := min(int64(1<<16), off)
		off -= n
		chunk := make([]byte, n)
		if _, err := r.ReadAt(chunk, off); err != nil && !errors.Is(err, io.EOF) {
			return 0, false
		}
		tail = append(chunk, tail...)
		trimmed := bytes.TrimRight(tail, " \t\r\n")
		if i := bytes.LastIndexByte(trimmed, '\n'); i >= 0 || off == 0 {
			return seqOf(trimmed[i+1:])
		}
	}
	return 0, false
}

// seqOf reads N from a line that begins {"seq":N.
func seqOf(line []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte(`{"seq":`))
	if !ok {
		return 0, false
	}
	var n int64
	digits := 0
	for _, c := range rest {
		if c < '0' || c > '9' || digits > 18 {
			break
		}
		n = n*10 + int64(c-'0')
		digits++
	}
	return n, digits > 0 && n > 0
}
