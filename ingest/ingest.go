// Package ingest decodes what lineage imports — dbt manifests and run results,
// OpenLineage events, YAML declaration files — into typed inputs. It checks the shape
// and the bounds of a body (size, lengths, names that can be stored) and never echoes
// it; it knows nothing of workspaces, datasets or storage: the lineage service takes
// what it returns. Callers check the caller's permission before decoding (a forbidden
// upload is refused without being parsed), then the size and shape here.
package ingest

import (
	"strconv"

	"github.com/vigia-data/vigia"
)

// MaxImportBytes bounds a manifest or a declaration file.
const MaxImportBytes = 32 << 20

// tooLarge is the refusal of a body over MaxImportBytes.
func tooLarge() error {
	return &vigia.Error{Kind: vigia.KindTooLarge, Code: vigia.CodePayloadTooLarge, Key: "error.payload_too_large"}
}

func itoa(i int) string { return strconv.Itoa(i) }

// ColumnPair is a column of a target and the column of a source it derives from.
type ColumnPair struct {
	From   string `yaml:"from"`
	To     string `yaml:"to"`
	Direct bool   `yaml:"direct"`
}
