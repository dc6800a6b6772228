package connect

import (
	"database/sql/driver"
	"errors"
	"regexp"
	"strconv"
	"sync"

	sqlite "modernc.org/sqlite"
)

// SQLite parses `X REGEXP Y` as a call to the function regexp(Y, X) and ships no such
// function; the sqlite3 shell adds one, and so does Vigia for every SQLite connection it
// opens, so that pattern rules run on SQLite sources as on the others. Patterns are Go
// regular expressions (RE2: linear time, no backreferences), searched in the value's text
// (anchor with ^ and $ to test the whole value), case-sensitively. A NULL operand gives
// NULL, as SQL comparisons do.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("regexp", 2, sqliteRegexp)
}

// regexpCacheMax bounds the compiled patterns kept between calls (rules are few; the
// cache is emptied when full rather than evicted entry by entry).
const regexpCacheMax = 256

var regexpCache = struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}{m: map[string]*regexp.Regexp{}}

func compiledPattern(p string) (*regexp.Regexp, error) {
	regexpCache.Lock()
	defer regexpCache.Unlock()
	if re, ok := regexpCache.m[p]; ok {
		return re, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, errors.New("regexp: invalid pattern")
	}
	if len(regexpCache.m) >= regexpCacheMax {
		clear(regexpCache.m)
	}
	regexpCache.m[p] = re
	return re, nil
}

func sqliteRegexp(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	pattern, ok := sqliteText(args[0])
	if !ok {
		return nil, nil
	}
	value, ok := sqliteText(args[1])
	if !ok {
		return nil, nil
	}
	re, err := compiledPattern(pattern)
	if err != nil {
		return nil, err
	}
	if re.MatchString(value) {
		return int64(1), nil
	}
	return int64(0), nil
}

// sqliteText is a value as SQLite would cast it to text; false for NULL.
func sqliteText(v driver.Value) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, true
	case []byte:
		return string(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', 15, 64), true
	case bool:
		if x {
			return "1", true
		}
		return "0", true
	}
	return "", false
}
