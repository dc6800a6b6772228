package catalog

import (
	"encoding/base64"
	"encoding/json"

	"github.com/vigia-data/vigia"
)

// DatasetKey is a dataset's place in a list order: the sort's key (queries per day for
// usage, reach for impact) then schema, table and id. A cursor is its opaque form.
type DatasetKey struct {
	Sort          string   `json:"s"`
	QueriesPerDay *float64 `json:"q,omitempty"`
	Reach         int      `json:"r,omitempty"`
	Schema        string   `json:"a"`
	Table         string   `json:"b"`
	ID            string   `json:"i"`
}

// KeyOf is d's place in the order sort.
func KeyOf(d Dataset, sort string) DatasetKey {
	k := DatasetKey{Sort: sort, Schema: d.Schema, Table: d.Table, ID: d.ID}
	switch sort {
	case SortUsage:
		k.QueriesPerDay = d.QueriesPerDay
	case SortImpact:
		k.Reach = d.Reach
	}
	return k
}

// Cursor is the key's opaque form (GET /datasets?cursor=, an extension of the contract).
func (k DatasetKey) Cursor() string {
	b, _ := json.Marshal(k)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads a cursor of the order sort; false when it is not one.
func decodeCursor(s, sort string) (DatasetKey, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return DatasetKey{}, false
	}
	var k DatasetKey
	if json.Unmarshal(b, &k) != nil || k.Sort != sort || len(k.Schema) > 1000 || len(k.Table) > 1000 || !vigia.ValidID(k.ID) {
		return DatasetKey{}, false
	}
	return k, true
}
