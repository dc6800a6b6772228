package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/knowledge"
	"github.com/vigia-data/vigia/lineage"
)

// KnowledgeStore implements knowledge.Store.
type KnowledgeStore struct{ db *DB }

// Knowledge returns the knowledge-entry store.
func (db *DB) Knowledge() *KnowledgeStore { return &KnowledgeStore{db: db} }

var _ knowledge.Store = (*KnowledgeStore)(nil)

// rrfK is the constant of reciprocal-rank fusion: an entry's score is the sum over the
// rankings it is in of 1/(rrfK + rank).
const rrfK = 60

// searchDepth is how many entries each ranking of a search keeps before fusion.
const searchDepth = 500

// entryColumns selects an entry with its links to datasets the viewer sees ($2 teams,
// $3 admin).
var entryColumns = `e.id::text, e.workspace_id::text, e.kind, e.title, e.body, e.tags, e.outdated, e.author_id, e.created_at, e.updated_at,
	coalesce((SELECT array_agg(l.dataset_id::text || '/' || l.column_name ORDER BY l.dataset_id, l.column_name)
		FROM kb_entry_links l JOIN datasets d ON d.id = l.dataset_id
		WHERE l.entry_id = e.id AND d.dropped_at IS NULL AND ` + VisibleSQL("l.dataset_id", 2, 3) + `), '{}')`

func scanEntry(row pgx.Row, extra ...any) (knowledge.Entry, error) {
	var e knowledge.Entry
	var links []string
	err := row.Scan(append([]any{&e.ID, &e.WorkspaceID, &e.Kind, &e.Title, &e.Body, &e.Tags, &e.Outdated, &e.AuthorID,
		&e.CreatedAt, &e.UpdatedAt, &links}, extra...)...)
	for _, l := range links {
		ds, col, _ := strings.Cut(l, "/")
		e.Links = append(e.Links, knowledge.Link{DatasetID: ds, Column: col})
	}
	return e, err
}

// InsertEntry stores a new entry with its links.
func (s *KnowledgeStore) InsertEntry(ctx context.Context, e knowledge.Entry) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.db.q(ctx).Exec(ctx, `INSERT INTO kb_entries (id, workspace_id, kind, title, body, tags, outdated, author_id,
			created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			e.ID, e.WorkspaceID, e.Kind, e.Title, e.Body, nonNilStrings(e.Tags), e.Outdated, e.AuthorID, e.CreatedAt, e.UpdatedAt); err != nil {
			return translate(err)
		}
		return s.insertLinks(ctx, e.ID, e.Links)
	})
}

func (s *KnowledgeStore) insertLinks(ctx context.Context, id string, links []knowledge.Link) error {
	if len(links) == 0 {
		return nil
	}
	ds, cols := make([]string, len(links)), make([]string, len(links))
	for i, l := range links {
		ds[i], cols[i] = l.DatasetID, l.Column
	}
	_, err := s.db.q(ctx).Exec(ctx, `INSERT INTO kb_entry_links (entry_id, dataset_id, column_name)
		SELECT $1, d, c FROM unnest($2::uuid[], $3::text[]) AS u(d, c) ON CONFLICT DO NOTHING`, id, ds, cols)
	return translate(err)
}

// Entry returns an entry of the viewer's workspace.
func (s *KnowledgeStore) Entry(ctx context.Context, v catalog.Viewer, id string) (knowledge.Entry, error) {
	e, err := scanEntry(s.db.q(ctx).QueryRow(ctx, `SELECT `+entryColumns+` FROM kb_entries e WHERE e.workspace_id = $1 AND e.id = $4`,
		v.WorkspaceID, v.TeamIDs, v.Admin, id))
	return e, translate(err)
}

// UpdateEntry saves an entry's text, tags and flag, and replaces its visible links
// when links is not nil.
func (s *KnowledgeStore) UpdateEntry(ctx context.Context, v catalog.Viewer, e knowledge.Entry, links []knowledge.Link) error {
	return s.db.InTx(ctx, func(ctx context.Context) error {
		tag, err := s.db.q(ctx).Exec(ctx, `UPDATE kb_entries SET title = $3, body = $4, tags = $5, outdated = $6, updated_at = $7
			WHERE workspace_id = $1 AND id = $2`, v.WorkspaceID, e.ID, e.Title, e.Body, nonNilStrings(e.Tags), e.Outdated, e.UpdatedAt)
		if err != nil {
			return translate(err)
		}
		if tag.RowsAffected() == 0 {
			return vigia.NotFound()
		}
		if links == nil {
			return nil
		}
		if _, err := s.db.q(ctx).Exec(ctx, `DELETE FROM kb_entry_links l WHERE l.entry_id = $1 AND `+VisibleSQL("l.dataset_id", 2, 3),
			e.ID, v.TeamIDs, v.Admin); err != nil {
			return translate(err)
		}
		return s.insertLinks(ctx, e.ID, links)
	})
}

// MissingLinks returns the links whose dataset is not a live dataset the viewer sees,
// or whose column the dataset does not have.
func (s *KnowledgeStore) MissingLinks(ctx context.Context, v catalog.Viewer, links []knowledge.Link) ([]knowledge.Link, error) {
	var ds, cols []string
	var missing []knowledge.Link
	for _, l := range links {
		if !vigia.ValidID(l.DatasetID) {
			missing = append(missing, knowledge.Link{DatasetID: l.DatasetID})
			continue
		}
		ds, cols = append(ds, l.DatasetID), append(cols, l.Column)
	}
	if len(ds) == 0 {
		return missing, nil
	}
	rows, err := s.db.q(ctx).Query(ctx, `SELECT u.d::text, u.c,
			EXISTS (SELECT 1 FROM datasets d WHERE d.id = u.d AND d.workspace_id = $1 AND d.dropped_at IS NULL AND `+VisibleSQL("d.id", 2, 3)+`),
			u.c = '' OR EXISTS (SELECT 1 FROM dataset_columns c WHERE c.dataset_id = u.d AND c.name = u.c)
		FROM unnest($4::uuid[], $5::text[]) AS u(d, c)`, v.WorkspaceID, v.TeamIDs, v.Admin, ds, cols)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var l knowledge.Link
		var dsOK, colOK bool
		if err := rows.Scan(&l.DatasetID, &l.Column, &dsOK, &colOK); err != nil {
			return nil, translate(err)
		}
		switch {
		case !dsOK:
			missing = append(missing, knowledge.Link{DatasetID: l.DatasetID})
		case !colOK:
			missing = append(missing, l)
		}
	}
	return missing, translate(rows.Err())
}

// Search lists entries. With a query: the entries the full-text search matches (the
// three configurations' queries OR-ed, ranked by ts_rank) and those whose folded text
// is trigram-similar to the folded query (ranked by word similarity), each ranking cut
// at searchDepth, fused by reciprocal rank; Total is the size of the fused list.
func (s *KnowledgeStore) Search(ctx context.Context, v catalog.Viewer, q knowledge.Query) (vigia.List[knowledge.Entry], error) {
	args := []any{v.WorkspaceID, v.TeamIDs, v.Admin}
	arg := func(x any) string {
		args = append(args, x)
		return fmt.Sprintf("$%d", len(args))
	}
	where := []string{"e.workspace_id = $1"}
	if !q.IncludeOutdated {
		where = append(where, "NOT e.outdated", "NOT ('"+knowledge.TagPIIGate+"' = ANY(e.tags))")
	}
	if q.Kind != nil {
		where = append(where, "e.kind = "+arg(*q.Kind))
	}
	if q.Tag != nil {
		where = append(where, arg(strings.ToLower(*q.Tag))+" = ANY(e.tags)")
	}
	if q.DatasetID != nil {
		where = append(where, "EXISTS (SELECT 1 FROM kb_entry_links l WHERE l.entry_id = e.id AND l.dataset_id = "+arg(*q.DatasetID)+
			"::uuid AND "+VisibleSQL("l.dataset_id", 2, 3)+")")
	}
	cond := strings.Join(where, " AND ")
	var sql, count string
	if q.Q == nil {
		sql = `SELECT ` + entryColumns + `, 0::float8, count(*) OVER () FROM kb_entries e WHERE ` + cond +
			` ORDER BY e.created_at DESC, e.id`
		count = `SELECT count(*) FROM kb_entries e WHERE ` + cond
	} else {
		qa := arg(*q.Q)
		fused := fmt.Sprintf(`WITH fts AS (
				SELECT e.id, row_number() OVER (ORDER BY ts_rank(e.search, kb_tsq(%[1]s)) DESC, e.id) AS r
				FROM kb_entries e WHERE %[2]s AND e.search @@ kb_tsq(%[1]s) ORDER BY r LIMIT %[3]d),
			trg AS (
				SELECT e.id, row_number() OVER (ORDER BY word_similarity(kb_fold(%[1]s), e.folded) DESC, e.id) AS r
				FROM kb_entries e WHERE %[2]s AND kb_fold(%[1]s) <%% e.folded ORDER BY r LIMIT %[3]d),
			fused AS (
				SELECT id, sum(1.0 / (%[4]d + r))::float8 AS score FROM (SELECT id, r FROM fts UNION ALL SELECT id, r FROM trg) u GROUP BY id)
			`, qa, cond, searchDepth, rrfK)
		sql = fused + `SELECT ` + entryColumns + `, f.score, count(*) OVER () FROM fused f JOIN kb_entries e ON e.id = f.id
			ORDER BY f.score DESC, e.created_at DESC, e.id`
		count = fused + `SELECT count(*) FROM fused`
	}
	countArgs := slices.Clone(args)
	sql += " LIMIT " + arg(q.Page.Limit) + " OFFSET " + arg(q.Page.Offset)
	rows, err := s.db.q(ctx).Query(ctx, sql, args...)
	if err != nil {
		return vigia.List[knowledge.Entry]{}, translate(err)
	}
	defer rows.Close()
	out := vigia.List[knowledge.Entry]{Items: []knowledge.Entry{}}
	for rows.Next() {
		var score float64
		e, err := scanEntry(rows, &score, &out.Total)
		if err != nil {
			return vigia.List[knowledge.Entry]{}, translate(err)
		}
		e.Score = score
		out.Items = append(out.Items, e)
	}
	if err := rows.Err(); err != nil {
		return vigia.List[knowledge.Entry]{}, translate(err)
	}
	if len(out.Items) == 0 && q.Page.Offset > 0 {
		// Past the end: the total still counts the whole list.
		// The count names every parameter, as the list does ($2 and $3 are the viewer's).
		count = `SELECT n FROM (` + count + `) c(n) WHERE cardinality($2::uuid[]) >= 0 AND $3::boolean IS NOT NULL`
		if err := s.db.q(ctx).QueryRow(ctx, count, countArgs...).Scan(&out.Total); err != nil {
			return vigia.List[knowledge.Entry]{}, translate(err)
		}
	}
	return out, nil
}

// knowledgeNodes gives the knowledge graph the current (not outdated, not gated)
// entries linked to the datasets: notes and decisions as kb_entry nodes, glossary terms
// as term and metric definitions as metric nodes, each with a means edge to every
// dataset it is about; the props name the columns it is about.
type knowledgeNodes struct{ db *DB }

func (knowledgeNodes) Kinds() []lineage.NodeKind {
	return []lineage.NodeKind{lineage.NodeKBEntry, lineage.NodeTerm, lineage.NodeMetric}
}
func (knowledgeNodes) Structural() bool { return true }
func (p knowledgeNodes) Nodes(ctx context.Context, ws string, ids []string) ([]lineage.KNode, []lineage.KEdge, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	rows, err := p.db.q(ctx).Query(ctx, `SELECT e.id::text, e.kind, e.title, l.dataset_id::text,
			array_agg(l.column_name ORDER BY l.column_name) FILTER (WHERE l.column_name <> '')
		FROM kb_entries e JOIN kb_entry_links l ON l.entry_id = e.id
		WHERE e.workspace_id = $1 AND l.dataset_id = ANY($2::uuid[]) AND NOT e.outdated AND NOT ($3 = ANY(e.tags))
		GROUP BY e.id, e.kind, e.title, e.created_at, l.dataset_id
		ORDER BY e.created_at, e.id, l.dataset_id LIMIT 4000`, ws, ids, knowledge.TagPIIGate)
	if err != nil {
		return nil, nil, translate(err)
	}
	defer rows.Close()
	var nodes []lineage.KNode
	var edges []lineage.KEdge
	byID := map[string]int{}
	for rows.Next() {
		var id, kind, title, ds string
		var cols []string
		if err := rows.Scan(&id, &kind, &title, &ds, &cols); err != nil {
			return nil, nil, translate(err)
		}
		nk := lineage.NodeKBEntry
		switch kind {
		case knowledge.KindTerm:
			nk = lineage.NodeTerm
		case knowledge.KindMetric:
			nk = lineage.NodeMetric
		}
		nid := string(nk) + ":" + id
		i, ok := byID[nid]
		if !ok {
			i = len(nodes)
			byID[nid] = i
			nodes = append(nodes, lineage.KNode{ID: nid, Kind: nk, Name: title, Props: map[string]any{"entry_kind": kind}})
		}
		for _, c := range cols {
			cs, _ := nodes[i].Props["columns"].([]string)
			nodes[i].Props["columns"] = append(cs, ds+"."+c)
		}
		edges = append(edges, lineage.KEdge{Source: nid, Target: lineage.DatasetNodeID(ds), Kind: lineage.RelMeans})
	}
	return nodes, edges, translate(rows.Err())
}
