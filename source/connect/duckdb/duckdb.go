//go:build duckdb

package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	duck "github.com/duckdb/duckdb-go/v2"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

// Version names the driver module and the DuckDB engine it embeds (checked by
// TestEngineVersion against the engine's own answer).
const Version = "duckdb-go v2.10504.0 (DuckDB v1.5.4)"

// Defaults of the session limits (source.FilesLimits), sized for a small host that also
// serves the API: DuckDB otherwise takes 80 % of the memory and every core.
const (
	DefaultMemoryLimit = "1GB"
	DefaultThreads     = 2
)

// MaxDatasets bounds the datasets a directory yields (the first ones in path order).
const MaxDatasets = 1000

func init() {
	connect.Register(source.DuckDB, connect.Driver{Open: Open, ValidateDSN: ValidateDSN,
		ServerIdentity: serverIdentity, Version: Version})
}

func newError(op, reason string) *source.Error {
	return source.NewError(source.DuckDB, op, reason, "", nil)
}

// dsnPath reads the path a DSN names: a plain path (a DuckDB database file, a data file, a
// directory). Driver options are refused: this package decides how the engine runs.
func dsnPath(dsn string) (string, error) {
	p := strings.TrimSpace(dsn)
	if p == "" || p == ":memory:" || strings.HasPrefix(p, ":") || strings.ContainsAny(p, "?\x00\n\r") {
		return "", newError("validate", source.ReasonInvalidDSN)
	}
	return p, nil
}

// ValidateDSN parses a DSN without touching the file system.
func ValidateDSN(dsn string) error {
	_, err := dsnPath(dsn)
	return err
}

func serverIdentity(dsn string) (string, string, bool) {
	p, err := dsnPath(dsn)
	if err != nil {
		return "", "", false
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", "", false
	}
	return "file://" + (&url.URL{Path: filepath.ToSlash(abs)}).EscapedPath(), "", true
}

var memoryLimitRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)? ?(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$`)

// Limits returns the session settings opts asks for, with the defaults filled; an unusable
// memory limit is the default.
func Limits(l source.FilesLimits) source.FilesLimits {
	if !memoryLimitRE.MatchString(l.MemoryLimit) {
		l.MemoryLimit = DefaultMemoryLimit
	}
	if l.Threads <= 0 {
		l.Threads = DefaultThreads
	}
	if l.TempDirectory == "" {
		l.TempDirectory = filepath.Join(os.TempDir(), "vigia-duckdb")
	}
	return l
}

// Open opens a DuckDB database file read-only, or a directory (or one data file) whose
// files become datasets of schema "files", inside opts.FilesRoot (required). The session
// is bounded by opts.Files (memory_limit, threads, temp_directory), reads files only inside
// the connection's directory and the spill directory (enable_external_access off,
// allowed_directories, configuration locked), resolves relative paths in the connection's
// directory (file_search_path), and installs no extension. Statements are interrupted when
// their deadline (the statement timeout) expires.
func Open(ctx context.Context, dsn string, opts source.Options) (source.Source, error) {
	p, err := dsnPath(dsn)
	if err != nil {
		return nil, err
	}
	if opts.FilesRoot == "" {
		return nil, newError("open", source.ReasonPermission)
	}
	real, err := connect.ConfinedPath(source.DuckDB, p, opts.FilesRoot)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, newError("open", source.ReasonNotFound)
	}
	d := &dialect{}
	switch {
	case st.IsDir():
		d.dir = real
	case st.Mode().IsRegular() && formatOf(real) != "":
		d.dir, d.only = filepath.Dir(real), filepath.Base(real)
	case st.Mode().IsRegular():
		d.dir, d.database = filepath.Dir(real), true
	default:
		return nil, newError("open", source.ReasonInvalidDSN)
	}
	lim := Limits(opts.Files)
	if err := os.MkdirAll(lim.TempDirectory, 0o700); err != nil {
		return nil, newError("open", source.ReasonPermission)
	}
	d.root = d.dir
	if d.database {
		// A database's views may read files anywhere under the files root (a connection
		// could name any of them): the root, after its symbolic links.
		root, err := filepath.EvalSymlinks(opts.FilesRoot)
		if err != nil {
			return nil, newError("open", source.ReasonPermission)
		}
		if root, err = filepath.Abs(root); err != nil {
			return nil, newError("open", source.ReasonPermission)
		}
		d.root = root
	}
	cfg := url.Values{}
	cfg.Set("memory_limit", lim.MemoryLimit)
	cfg.Set("threads", strconv.Itoa(lim.Threads))
	cfg.Set("temp_directory", lim.TempDirectory)
	cfg.Set("autoinstall_known_extensions", "false")
	cfg.Set("autoload_known_extensions", "false")
	// Each session of a database file names the re-created views first (see
	// sourceCatalog); the path is known once the database is attached.
	var searchPath atomic.Pointer[string]
	connector, err := duck.NewConnector(":memory:?"+cfg.Encode(), func(ex driver.ExecerContext) error {
		if sp := searchPath.Load(); sp != nil {
			_, err := ex.ExecContext(context.Background(), "SET search_path = "+literal(*sp), nil)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, classifyOpen(err)
	}
	db := sql.OpenDB(connector)
	if err := setup(ctx, db, d, lim, real, &searchPath); err != nil {
		_ = db.Close()
		return nil, err
	}
	s := connect.NewSource(d, db, opts)
	if d.database {
		if err := s.Ping(ctx); err != nil {
			_ = s.Close()
			return nil, err
		}
		return s, nil
	}
	// A directory: its datasets exist as views from the start, for every statement
	// (profiles, rules, failing rows) that names them.
	if _, err := s.Discover(source.WithOperation(ctx, source.OperationFrom(ctx, source.OpTest))); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// setup confines and configures the engine once for every connection of the pool (the
// settings are global to the database instance, and locked); a database file is attached
// first, and its views re-created once the confinement holds and is locked.
func setup(ctx context.Context, db *sql.DB, d *dialect, lim source.FilesLimits, file string, searchPath *atomic.Pointer[string]) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return classifyOpen(err)
	}
	defer conn.Close()
	if d.database {
		if _, err := conn.ExecContext(ctx, "ATTACH "+literal(file)+" AS "+quote(sourceCatalog)+" (READ_ONLY)"); err != nil {
			return classifyOpen(err)
		}
	}
	stmts := []string{
		"SET GLOBAL file_search_path = " + literal(d.dir),
		"SET GLOBAL allowed_directories = [" + literal(d.root) + ", " + literal(lim.TempDirectory) + "]",
		"SET GLOBAL enable_external_access = false",
		"CREATE SCHEMA IF NOT EXISTS " + quote(memoryCatalog) + "." + quote(source.FilesSchema),
	}
	for _, st := range stmts {
		if _, err := conn.ExecContext(ctx, st); err != nil {
			return classifyOpen(err)
		}
	}
	// Locked before any SQL of the database file is bound.
	if _, err := conn.ExecContext(ctx, "SET GLOBAL lock_configuration = true"); err != nil {
		return classifyOpen(err)
	}
	if d.database {
		sp, err := d.attachDatabase(ctx, conn)
		if err != nil {
			return err
		}
		searchPath.Store(&sp)
	}
	return nil
}

// classifyOpen reduces an error of opening or configuring the engine (never its message,
// which names the path).
func classifyOpen(err error) *source.Error {
	reason, code := classify(err)
	if reason == "" || reason == source.ReasonQuery {
		reason = source.ReasonNotFound
		if errors.Is(err, os.ErrPermission) {
			reason = source.ReasonPermission
		}
		var de *duck.Error
		if errors.As(err, &de) && de.Type != duck.ErrorTypeIO {
			reason = source.ReasonQuery
		}
	}
	return source.NewError(source.DuckDB, "open", reason, code, nil)
}

func classify(err error) (reason, code string) {
	var de *duck.Error
	if !errors.As(err, &de) {
		return "", ""
	}
	code = strconv.Itoa(int(de.Type))
	switch de.Type {
	case duck.ErrorTypeInterrupt:
		return source.ReasonTimeout, code
	case duck.ErrorTypePermission:
		return source.ReasonPermission, code
	case duck.ErrorTypeCatalog:
		return source.ReasonNotFound, code
	case duck.ErrorTypeIO:
		// A file gone or unreadable since discovery.
		return source.ReasonNotFound, code
	case duck.ErrorTypeOutOfMemory:
		return source.ReasonQuery, code
	}
	return source.ReasonQuery, code
}

func quote(ident string) string { return `"` + strings.ReplaceAll(ident, `"`, `""`) + `"` }

func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
