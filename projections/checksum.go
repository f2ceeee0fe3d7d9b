package projections

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"slices"
	"strings"

	"zombiezen.com/go/sqlite"
)

// Checksum returns a SHA-256 over every row of every table of p, in
// canonical order (the table's key, then valid_from), including each row
// version's revision stamps. Two builds of the same log have equal
// checksums exactly when their tables hold the same rows.
func Checksum(conn *sqlite.Conn, p Projection) (string, error) {
	h := sha256.New()
	for _, t := range p.Tables() {
		if err := hashRows(conn, h, t.Name, checksumQuery(t), nil, nil); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// checksumQuery is the statement Checksum reads table t with: every row,
// in the order of its key (then valid_from, for a revision-stamped
// table).
func checksumQuery(t Table) string {
	order := strings.Join(t.Key, ", ")
	if t.Temporal {
		order += ", valid_from"
	}
	return fmt.Sprintf("SELECT * FROM %s ORDER BY %s", t.Name, order)
}

// StateChecksumAt returns a SHA-256 over the rows of p visible at rev,
// without their revision stamps: the state a reader at rev sees. It equals
// the StateChecksumAt(head) of a log truncated at rev. The tables that
// hold the head's state alone (Table.HeadOnly) are left out: Checksum
// holds them to a rebuild.
func StateChecksumAt(conn *sqlite.Conn, p Projection, rev int64) (string, error) {
	h := sha256.New()
	for _, t := range p.Tables() {
		if t.HeadOnly {
			continue
		}
		order := strings.Join(t.Key, ", ")
		var q string
		if t.Temporal {
			q = fmt.Sprintf("SELECT * FROM %s WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY %s", t.Name, order)
		} else {
			q = fmt.Sprintf("SELECT * FROM %s WHERE seq <= :rev ORDER BY %s", t.Name, order)
		}
		skip := map[string]bool{"valid_from": true, "valid_to": true, "lvl": true, "node": true}
		if err := hashRows(conn, h, t.Name, q, map[string]int64{":rev": rev}, skip); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashRows writes table's name, then every row q returns, to h: for each
// row an 'R', then each column not in skip as its name and its value
// (N; I and 8 bytes; F and 8 bytes; T or B and the length-prefixed
// bytes). Each row is assembled in one buffer and written to h at once,
// and the columns' names are read once: a checksum of a whole rebuild
// reads every projection row twice in replay --verify and verify.
func hashRows(conn *sqlite.Conn, h hash.Hash, table, q string, args map[string]int64, skip map[string]bool) error {
	st, _, err := conn.PrepareTransient(q)
	if err != nil {
		return fmt.Errorf("checksum %s: %w", table, err)
	}
	defer st.Finalize()
	for k, v := range args {
		st.SetInt64(k, v)
	}
	n := st.ColumnCount()
	names := make([]string, 0, n)
	cols := make([]int, 0, n)
	for i := 0; i < n; i++ {
		if name := st.ColumnName(i); !skip[name] {
			names = append(names, name)
			cols = append(cols, i)
		}
	}
	row := appendLenString(nil, table)
	h.Write(row)
	return stepRows(st, "checksum "+table, func(st *sqlite.Stmt) error {
		row = append(row[:0], 'R')
		for j, i := range cols {
			row = appendLenString(row, names[j])
			switch st.ColumnType(i) {
			case sqlite.TypeNull:
				row = append(row, 'N')
			case sqlite.TypeInteger:
				row = binary.BigEndian.AppendUint64(append(row, 'I'), uint64(st.ColumnInt64(i)))
			case sqlite.TypeFloat:
				row = binary.BigEndian.AppendUint64(append(row, 'F'), math.Float64bits(st.ColumnFloat(i)))
			case sqlite.TypeText, sqlite.TypeBlob:
				tag := byte('T')
				if st.ColumnType(i) == sqlite.TypeBlob {
					tag = 'B'
				}
				size := st.ColumnLen(i)
				row = binary.BigEndian.AppendUint32(append(row, tag), uint32(size))
				row = slices.Grow(row, size)
				st.ColumnBytes(i, row[len(row):len(row)+size])
				row = row[:len(row)+size]
			}
		}
		h.Write(row)
		return nil
	})
}

// appendLenString appends s's length (4 bytes, big-endian) and s.
func appendLenString(b []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint32(b, uint32(len(s))), s...)
}
