package projections

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
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
		order := strings.Join(t.Key, ", ")
		if t.Temporal {
			order += ", valid_from"
		}
		q := fmt.Sprintf("SELECT * FROM %s ORDER BY %s", t.Name, order)
		if err := hashRows(conn, h, t.Name, q, nil, nil); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
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

func hashRows(conn *sqlite.Conn, h hash.Hash, table, q string, args map[string]int64, skip map[string]bool) error {
	st, _, err := conn.PrepareTransient(q)
	if err != nil {
		return fmt.Errorf("checksum %s: %w", table, err)
	}
	defer st.Finalize()
	for k, v := range args {
		st.SetInt64(k, v)
	}
	var buf [8]byte
	writeStr := func(s string) {
		binary.BigEndian.PutUint32(buf[:4], uint32(len(s)))
		h.Write(buf[:4])
		h.Write([]byte(s))
	}
	writeStr(table)
	for {
		row, err := st.Step()
		if err != nil {
			return fmt.Errorf("checksum %s: %w", table, err)
		}
		if !row {
			return nil
		}
		h.Write([]byte{'R'})
		for i := 0; i < st.ColumnCount(); i++ {
			name := st.ColumnName(i)
			if skip[name] {
				continue
			}
			writeStr(name)
			switch st.ColumnType(i) {
			case sqlite.TypeNull:
				h.Write([]byte{'N'})
			case sqlite.TypeInteger:
				h.Write([]byte{'I'})
				binary.BigEndian.PutUint64(buf[:], uint64(st.ColumnInt64(i)))
				h.Write(buf[:])
			case sqlite.TypeFloat:
				h.Write([]byte{'F'})
				binary.BigEndian.PutUint64(buf[:], math.Float64bits(st.ColumnFloat(i)))
				h.Write(buf[:])
			case sqlite.TypeText:
				h.Write([]byte{'T'})
				writeStr(st.ColumnText(i))
			case sqlite.TypeBlob:
				b := make([]byte, st.ColumnLen(i))
				st.ColumnBytes(i, b)
				h.Write([]byte{'B'})
				writeStr(string(b))
			}
		}
	}
}
