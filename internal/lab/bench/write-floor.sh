#!/bin/sh
# write-floor.sh DB: what writing a rebuilt project's projections costs in
# the native SQLite shell (sqlite3), with nothing read from the log,
# decoded, hashed or folded: the rows of every projection table copied
# into new tables without indexes, then every projection index built, then
# the search index (FTS5) rebuilt, in one transaction with synchronous=OFF.
# It works on a copy of DB in a temporary directory and prints the seconds
# of each phase. A replay cannot be faster than this floor, whatever its
# fold: issue #17's target 4 is read against it in docs/notes/benchmarks.md.
set -eu
if [ $# -ne 1 ] || [ ! -f "$1" ]; then
	echo "usage: $0 PROJECT/.awr/awr.db (a rebuilt project database)" >&2
	exit 2
fi
command -v sqlite3 >/dev/null || { echo "$0: needs the sqlite3 shell" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db=$dir/floor.db
sqlite3 "$1" ".backup '$db'"
q() { sqlite3 "$db" "$1"; }
like="tbl_name LIKE 'p\_%' ESCAPE '\\'"
{
	echo "PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-262144; PRAGMA threads=2;"
	q "SELECT 'DROP INDEX ' || name || ';' FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND $like"
	echo ".timer on"
	echo "BEGIN;"
	echo "SELECT 'phase rows';"
	# The full-text indexes (virtual tables and their shadow tables) are
	# not copied: the search phase rebuilds those whose content is a table.
	q "SELECT 'CREATE TABLE floor_' || t.name || ' AS SELECT * FROM ' || t.name || ';' FROM sqlite_schema t WHERE t.type = 'table' AND t.$like AND NOT EXISTS (SELECT 1 FROM sqlite_schema v WHERE v.type = 'table' AND v.sql LIKE 'CREATE VIRTUAL TABLE%' AND (t.name = v.name OR substr(t.name, 1, length(v.name) + 1) = v.name || '_'))"
	echo "SELECT 'phase indexes';"
	q "SELECT sql || ';' FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND $like"
	echo "SELECT 'phase search';"
	q "SELECT 'INSERT INTO ' || name || '(' || name || ') VALUES(''rebuild'');' FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE % USING fts5(%content=''p_%' AND $like"
	echo "COMMIT;"
} >"$dir/floor.sql"
sqlite3 -bail "$db" <"$dir/floor.sql" >"$dir/out" 2>&1 || { cat "$dir/out" >&2; exit 1; }
awk -v events="$(q 'SELECT count(*) FROM events')" '
	/^phase / { phase = $2; next }
	/^Run Time/ { t[phase] += $4 }
	END {
		total = t["rows"] + t["indexes"] + t["search"]
		printf "events %d\nrows %.3f s\nindexes %.3f s\nsearch %.3f s\ntotal %.3f s (at most %.0f events/s)\n", events, t["rows"], t["indexes"], t["search"], total, events / total
	}' "$dir/out"
