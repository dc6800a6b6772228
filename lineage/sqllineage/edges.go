package sqllineage

// Edge is one parsed lineage edge: a table or view the analysed view reads, with the
// column map it carries into the view.
type Edge struct {
	Source TableRef
	// Columns maps source columns to view columns, in view column order.
	Columns []ColumnPair
	// FilterOnly is true when the view reads the source only to filter, join or group
	// (no value of it reaches an output column).
	FilterOnly bool
}

// ColumnPair is one entry of an edge's column map.
type ColumnPair struct {
	From   string // column of the source
	To     string // column of the view
	Direct bool   // To is a plain copy of From
}

// Edges groups the lineage by source, one edge per entry of Sources and in that
// order, as the lineage graph stores parsed edges.
func (r Result) Edges() []Edge {
	edges := make([]Edge, len(r.Sources))
	at := make(map[TableRef]int, len(r.Sources))
	for i, s := range r.Sources {
		edges[i].Source = s
		at[s] = i
	}
	for _, c := range r.Columns {
		for _, f := range c.From {
			i, ok := at[f.Table]
			if !ok {
				continue
			}
			edges[i].Columns = append(edges[i].Columns, ColumnPair{From: f.Column, To: c.Name, Direct: c.Direct})
		}
	}
	for i := range edges {
		edges[i].FilterOnly = len(edges[i].Columns) == 0
	}
	return edges
}
