//go:build duckdb

package duckdb

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vigia-data/vigia/source"
)

// File formats DuckDB reads without an extension to install.
const (
	formatParquet = "parquet"
	formatCSV     = "csv"
	formatJSON    = "json"
)

// maxWalk bounds the directory entries one discovery visits.
const maxWalk = 200_000

// extensions of each format, compressed variants included.
var extensions = []struct{ ext, format string }{
	{".parquet", formatParquet}, {".parq", formatParquet},
	{".csv", formatCSV}, {".tsv", formatCSV}, {".csv.gz", formatCSV}, {".tsv.gz", formatCSV},
	{".json", formatJSON}, {".jsonl", formatJSON}, {".ndjson", formatJSON},
	{".json.gz", formatJSON}, {".jsonl.gz", formatJSON}, {".ndjson.gz", formatJSON},
}

// extensionOf is the data-file extension of a name ("" when it is not a data file).
func extensionOf(name string) string {
	lower := strings.ToLower(name)
	best := ""
	for _, e := range extensions {
		if strings.HasSuffix(lower, e.ext) && len(e.ext) > len(best) {
			best = e.ext
		}
	}
	return best
}

// formatOf is the format of a data file, "" for any other file.
func formatOf(name string) string {
	ext := extensionOf(name)
	for _, e := range extensions {
		if e.ext == ext {
			return e.format
		}
	}
	return ""
}

// fileSet is one dataset of a directory: a file, or the files of one format under a
// top-level directory (hive-partitioned or not).
type fileSet struct {
	// name is source.FileDatasetName of the set's path: the dataset's table name.
	name   string
	format string
	// globs are the set's files relative to the connection's directory: the file, or one
	// "dir/**/*<ext>" per extension found.
	globs []string
	// partitions are the hive partition keys (key=value directories), in path order.
	partitions []string
}

// hidden names are skipped: dot files, and _-prefixed ones (Spark's _SUCCESS, _temporary).
func hidden(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") }

// fileSets groups the data files of dir into datasets by source.FileDatasetName: each data
// file at the top is its own dataset, each top-level directory one dataset of its most
// frequent format. only, when set, is the one file the connection names. Symbolic links
// are not followed.
func fileSets(dir, only string) []fileSet {
	if only != "" {
		if formatOf(only) == "" {
			return nil
		}
		return []fileSet{{name: source.FileDatasetName(only), format: formatOf(only), globs: []string{only}}}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []fileSet
	budget := maxWalk
	for _, e := range entries {
		if len(out) >= MaxDatasets || budget <= 0 {
			break
		}
		name := e.Name()
		if hidden(name) || strings.ContainsAny(name, "*?[{=") {
			continue
		}
		switch {
		case e.Type().IsRegular():
			if f := formatOf(name); f != "" {
				out = append(out, fileSet{name: source.FileDatasetName(name), format: f, globs: []string{name}})
			}
		case e.IsDir():
			if s, ok := dirSet(dir, name, &budget); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// dirSet is the dataset of a top-level directory: its data files of the most frequent
// format (parquet first on a tie, then csv, then json), with the partition keys of its
// key=value directories.
func dirSet(dir, name string, budget *int) (fileSet, bool) {
	count := map[string]int{}
	exts := map[string]map[string]bool{}
	var keys []string
	seen := map[string]bool{}
	_ = filepath.WalkDir(filepath.Join(dir, name), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		*budget--
		if *budget <= 0 {
			return filepath.SkipAll
		}
		if e.Name() != name && hidden(e.Name()) {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if k, _, ok := strings.Cut(e.Name(), "="); ok && k != "" && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		if ext := extensionOf(e.Name()); ext != "" {
			f := formatOf(e.Name())
			count[f]++
			if exts[f] == nil {
				exts[f] = map[string]bool{}
			}
			exts[f][ext] = true
		}
		return nil
	})
	best := ""
	for _, f := range []string{formatParquet, formatCSV, formatJSON} {
		if count[f] > count[best] {
			best = f
		}
	}
	if best == "" {
		return fileSet{}, false
	}
	var globs []string
	for ext := range exts[best] {
		globs = append(globs, path.Join(name, "**", "*"+ext))
	}
	sort.Strings(globs)
	return fileSet{name: source.FileDatasetName(globs[0]), format: best, globs: globs, partitions: keys}, true
}

// reader is the DuckDB table function reading the set, with paths absolute in dir.
func (s fileSet) reader(dir string) string {
	lits := make([]string, len(s.globs))
	for i, g := range s.globs {
		lits[i] = literal(filepath.Join(dir, filepath.FromSlash(g)))
	}
	fn := "read_parquet"
	switch s.format {
	case formatCSV:
		fn = "read_csv"
	case formatJSON:
		fn = "read_json"
	}
	hive := "false"
	if len(s.partitions) > 0 {
		hive = "true"
	}
	return fn + "([" + strings.Join(lits, ", ") + "], hive_partitioning = " + hive + ", union_by_name = true)"
}
