package connect

import (
	"crypto/md5"
	"database/sql/driver"
	"encoding/hex"
	"strconv"

	sqlite "modernc.org/sqlite"
)

// SQLite has no md5; data diffs hash rows with it on every engine (Postgres md5, MySQL
// MD5), so Vigia's SQLite connections register one: the lower-case hex MD5 of the
// value's text, NULL for NULL; and vigia_hex_int.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("md5", 1, sqliteMD5)
	sqlite.MustRegisterDeterministicScalarFunction("vigia_hex_int", 1, sqliteHexInt)
}

// sqliteHexInt reads up to 15 hex digits as an integer (SQLite's CAST reads none): the
// data diff turns MD5 prefixes into numbers to sum them. NULL or other text gives NULL.
func sqliteHexInt(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	s, ok := sqliteText(args[0])
	if !ok || s == "" || len(s) > 15 {
		return nil, nil
	}
	n, err := strconv.ParseInt(s, 16, 64)
	if err != nil {
		return nil, nil
	}
	return n, nil
}

func sqliteMD5(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	s, ok := sqliteText(args[0])
	if !ok {
		return nil, nil
	}
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:]), nil
}
