package events

// The domain rules' fold (Invariants) keeps every session, claim and
// execution a log ever had: a whole log's worth, in every rebuild, verify
// and import. Kept as Go maps of strings to pointers, they were the part of
// a rebuild's memory that grew with the log (about 300 bytes a session);
// an idIndex keeps an id awr wrote (a ULID) as its 16 bytes, and the fold
// keeps what it knows of each as a value without pointers, so the
// collector has nothing to scan there.

// ulidKey is a ULID's 128 bits.
type ulidKey [2]uint64

// crockford maps a byte of a ULID in canonical form (Crockford's base32,
// upper case, as awr writes it) to its value, and every other byte to
// 0xff.
var crockford = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range []byte("0123456789ABCDEFGHJKMNPQRSTVWXYZ") {
		t[c] = byte(i)
	}
	return t
}()

// ulidOf returns the 128 bits of id when id is a ULID in canonical form:
// 26 characters of the upper-case alphabet, the first at most 7 (26 × 5
// bits hold 130, of which a ULID uses 128). Only that form is taken, so
// two ids have one key only when they are the same string.
func ulidOf(id string) (k ulidKey, ok bool) {
	if len(id) != 26 || id[0] > '7' {
		return k, false
	}
	for i := 0; i < len(id); i++ {
		d := crockford[id[i]]
		if d == 0xff {
			return k, false
		}
		k[0] = k[0]<<5 | k[1]>>59
		k[1] = k[1]<<5 | uint64(d)
	}
	return k, true
}

// String is the canonical form of k, the id ulidOf took it from.
func (k ulidKey) String() string {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	var b [26]byte
	hi, lo := k[0], k[1]
	for i := 25; i >= 0; i-- {
		b[i] = alphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(b[:])
}

// idIndex finds the index of an id among those added: a ULID by its 16
// bytes, any other id (a log awr did not write may hold any string) by
// itself.
type idIndex struct {
	ulid  map[ulidKey]int32
	other map[string]int32
}

func newIDIndex() idIndex {
	return idIndex{ulid: map[ulidKey]int32{}, other: map[string]int32{}}
}

func (x idIndex) find(id string) (int32, bool) {
	if k, ok := ulidOf(id); ok {
		i, found := x.ulid[k]
		return i, found
	}
	i, found := x.other[id]
	return i, found
}

func (x idIndex) add(id string, i int32) {
	if k, ok := ulidOf(id); ok {
		x.ulid[k] = i
		return
	}
	x.other[id] = i
}

// id returns the id added at index i, for a message: it searches (a
// fault is reported once), "" when none was.
func (x idIndex) id(i int32) string {
	for k, j := range x.ulid {
		if j == i {
			return k.String()
		}
	}
	for id, j := range x.other {
		if j == i {
			return id
		}
	}
	return ""
}

// names numbers the strings a fold keeps many times over (work keys,
// execution streams), each kept once.
type names struct {
	index map[string]int32
	list  []string
}

// of returns s's number, numbering it if it has none.
func (n *names) of(s string) int32 {
	if i, ok := n.index[s]; ok {
		return i
	}
	i := int32(len(n.list))
	n.index[s] = i
	n.list = append(n.list, s)
	return i
}

// name returns the string numbered i.
func (n *names) name(i int32) string { return n.list[i] }
