package vigia_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// The transports never reach the database or a driver directly: they call services.
func TestTransportsDoNotImportStoreOrDrivers(t *testing.T) {
	forbidden := []string{
		"github.com/vigia-data/vigia/store",
		"github.com/jackc/pgx",
		"github.com/go-sql-driver/mysql",
		"modernc.org/sqlite",
		"github.com/neo4j/neo4j-go-driver",
	}
	for _, pkg := range []string{"./rest/...", "./graph/..."} {
		out, err := exec.Command("go", "list", "-deps", "-test=false", "-json=ImportPath", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		dec := json.NewDecoder(strings.NewReader(string(out)))
		for dec.More() {
			var p struct{ ImportPath string }
			if err := dec.Decode(&p); err != nil {
				t.Fatal(err)
			}
			for _, f := range forbidden {
				if p.ImportPath == f || strings.HasPrefix(p.ImportPath, f+"/") {
					t.Errorf("%s depends on %s", pkg, p.ImportPath)
				}
			}
		}
	}
}
