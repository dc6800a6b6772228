package connect_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia/source"
	"github.com/vigia-data/vigia/source/connect"
)

const fixtureRows = 5000

func backends() []backend { return []backend{pgBackend(), mysqlBackend(), sqliteBackend()} }

func TestSources(t *testing.T) {
	rows := clientes(fixtureRows)
	for _, b := range backends() {
		t.Run(string(b.kind), func(t *testing.T) {
			t.Parallel()
			dsn, db := b.setup(t, rows)
			ctx := context.Background()
			rec := &recorder{}
			src, err := connect.Open(ctx, b.kind, dsn, source.Options{Recorder: rec})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { src.Close() })
			if src.Kind() != b.kind || src.Dialect() != string(b.kind) {
				t.Fatalf("Kind %s Dialect %s", src.Kind(), src.Dialect())
			}
			if err := src.Ping(ctx); err != nil {
				t.Fatalf("Ping: %v", err)
			}
			tables, err := src.Discover(ctx)
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			clientesT := findTable(t, tables, "clientes")
			view := findTable(t, tables, "clientes_ativos")

			t.Run("DiscoveryDeclaresKindsKeysAndViews", func(t *testing.T) {
				if clientesT.Kind != source.TableKindTable || view.Kind != source.TableKindView {
					t.Fatalf("kinds %s, %s", clientesT.Kind, view.Kind)
				}
				id := findColumn(t, clientesT.Columns, "id")
				if !id.PrimaryKey || id.Nullable || id.Class != source.ClassNumeric || id.Position != 1 {
					t.Errorf("id = %+v", id)
				}
				if c := findColumn(t, clientesT.Columns, "email"); c.PrimaryKey || !c.Nullable || c.Class != source.ClassText {
					t.Errorf("email = %+v", c)
				}
				if c := findColumn(t, clientesT.Columns, "nome"); c.Nullable {
					t.Errorf("nome declared NOT NULL, got %+v", c)
				}
				if c := findColumn(t, clientesT.Columns, "criado_em"); c.Class != source.ClassTemporal {
					t.Errorf("criado_em = %+v", c)
				}
				if c := findColumn(t, clientesT.Columns, "saldo"); c.Class != source.ClassNumeric {
					t.Errorf("saldo = %+v", c)
				}
				if c := findColumn(t, clientesT.Columns, "ativo"); c.Class != source.ClassBoolean {
					t.Errorf("ativo = %+v", c)
				}
				findColumn(t, clientesT.Columns, colSegment)
				findColumn(t, clientesT.Columns, colCode)
				if len(clientesT.Columns) != 11 || clientesT.ViewDefinition != "" {
					t.Errorf("clientes: %d columns, definition %q", len(clientesT.Columns), clientesT.ViewDefinition)
				}
				def := strings.ToLower(view.ViewDefinition)
				if !strings.Contains(def, "clientes") || !strings.Contains(def, "ativo") || strings.HasPrefix(def, "create") {
					t.Errorf("view definition %q", view.ViewDefinition)
				}
				if len(view.Columns) != 3 {
					t.Errorf("view columns %+v", view.Columns)
				}
				switch b.kind {
				case source.Postgres:
					mv := findTable(t, tables, "saldos")
					if mv.Kind != source.TableKindMaterializedView || !strings.Contains(strings.ToLower(mv.ViewDefinition), "clientes") {
						t.Errorf("materialized view %+v", mv)
					}
					ev := findTable(t, tables, "eventos")
					if ev.Kind != source.TableKindTable || !findColumn(t, ev.Columns, "dia").Partition || findColumn(t, ev.Columns, "id").Partition {
						t.Errorf("partitioned table %+v", ev)
					}
					for _, tb := range tables {
						if tb.Name == "eventos_2024" {
							t.Errorf("partition listed as a dataset")
						}
					}
					if !id.Clustering || findColumn(t, clientesT.Columns, "nome").Clustering {
						t.Errorf("clustering: id %v", id.Clustering)
					}
				case source.MySQL:
					ev := findTable(t, tables, "eventos")
					if !findColumn(t, ev.Columns, "dia").Partition || findColumn(t, ev.Columns, "v").Partition {
						t.Errorf("partition columns %+v", ev.Columns)
					}
					if !findColumn(t, ev.Columns, "id").PrimaryKey || !findColumn(t, ev.Columns, "dia").PrimaryKey {
						t.Errorf("composite key %+v", ev.Columns)
					}
				}
			})

			rec.take()
			// The distinct sample is set below the table's size: left to its default (ten
			// times SampleSize) it would read the whole table and count exactly.
			std, err := src.Profile(ctx, clientesT, source.ProfileRequest{SampleSize: 1000, DistinctSampleSize: 2000})
			if err != nil {
				t.Fatalf("Profile: %v", err)
			}
			stdLog := rec.take()

			t.Run("ProfileCountsAreExact", func(t *testing.T) {
				if std.RowCount != fixtureRows || std.Depth != source.DepthStandard || std.Truncated {
					t.Fatalf("RowCount %d depth %s truncated %v", std.RowCount, std.Depth, std.Truncated)
				}
				if got := findProfile(t, std, "email").NullCount; got != fixtureRows/20 {
					t.Errorf("email nulls %d; want %d", got, fixtureRows/20)
				}
				if got := findProfile(t, std, "id").NullCount; got != 0 {
					t.Errorf("id nulls %d", got)
				}
				lo, hi := minMaxSaldo(rows)
				saldo := findProfile(t, std, "saldo")
				if saldo.Min == nil || saldo.Max == nil || math.Abs(saldo.Min.Float64()-lo) > 1e-6 || math.Abs(saldo.Max.Float64()-hi) > 1e-6 {
					t.Errorf("saldo min/max %v %v; want %v %v", saldo.Min, saldo.Max, lo, hi)
				}
				cr := findProfile(t, std, "criado_em")
				wantMin, wantMax := rows[0].criado, rows[len(rows)-1].criado
				if cr.MinTime == nil || cr.MaxTime == nil || !cr.MinTime.Equal(wantMin) || !cr.MaxTime.Equal(wantMax) {
					t.Errorf("criado_em min/max %v %v; want %v %v", cr.MinTime, cr.MaxTime, wantMin, wantMax)
				}
				if std.FreshnessColumn != "criado_em" || std.LatestTimestamp == nil || !std.LatestTimestamp.Equal(wantMax) {
					t.Errorf("freshness %q %v", std.FreshnessColumn, std.LatestTimestamp)
				}
			})

			t.Run("TextGetsLengthsNeverValues", func(t *testing.T) {
				for _, name := range []string{"nome", "email", "telefone", "nif", colSegment} {
					c := findProfile(t, std, name)
					if c.Min != nil || c.Max != nil || c.MinTime != nil || c.MaxTime != nil {
						t.Errorf("%s has min/max values", name)
					}
					if c.MinLength == nil || c.MaxLength == nil || c.AvgLength == nil {
						t.Errorf("%s lacks lengths", name)
					}
				}
				nif := findProfile(t, std, "nif")
				if *nif.MinLength != 9 || *nif.MaxLength != 9 || *nif.AvgLength != 9 {
					t.Errorf("nif lengths %d %d %v", *nif.MinLength, *nif.MaxLength, *nif.AvgLength)
				}
				seg := findProfile(t, std, colSegment)
				if *seg.MaxLength != 1 {
					t.Errorf("segment length %d", *seg.MaxLength)
				}
			})

			t.Run("SemanticTypesOnSample", func(t *testing.T) {
				want := map[string]string{
					"telefone":      "phone_pt",
					"nif":           "nif_pt",
					"email":         "email",
					"codigo_postal": "postal_code_pt",
				}
				for col, typ := range want {
					s := findProfile(t, std, col).Semantic
					if s == nil || s.Type != typ || !s.Estimated || s.SampleSize == 0 || s.Matches > s.SampleSize || s.Valid > s.Matches {
						t.Errorf("%s semantic %+v; want %s estimated", col, s, typ)
						continue
					}
					if s.Region != "" {
						t.Errorf("%s region %q", col, s.Region)
					}
				}
				if s := findProfile(t, std, "nif").Semantic; s != nil && s.Valid >= s.Matches {
					t.Errorf("nif Valid %d, Matches %d; want Valid < Matches", s.Valid, s.Matches)
				}
				if s := findProfile(t, std, "nome").Semantic; s != nil {
					t.Errorf("nome semantic %+v", s)
				}
				masks := findProfile(t, std, "telefone").Masks
				if len(masks) == 0 || len(masks) > 10 || masks[0].Mask != "999999999" {
					t.Errorf("telefone masks %+v", masks)
				}
				if m := findProfile(t, std, "nome").Masks; len(m) == 0 || !strings.HasPrefix(m[0].Mask, "AAAAAAA AAAAAAAAA") {
					t.Errorf("nome masks %+v", m)
				}
			})

			t.Run("DistinctEstimatesCoverTruth", func(t *testing.T) {
				if std.SampleSize == 0 || std.SampleSize >= fixtureRows || std.DistinctSampleSize < std.SampleSize || std.DistinctSampleSize >= fixtureRows {
					t.Fatalf("samples %d (%s), distinct %d (%s)", std.SampleSize, std.SampleMethod, std.DistinctSampleSize, std.DistinctSampleMethod)
				}
				if std.DistinctSampleMethod == source.SampleTableSample {
					t.Fatalf("distinct estimated on a block sample")
				}
				t.Logf("samples: %d rows by %s, distinct %d rows by %s", std.SampleSize, std.SampleMethod, std.DistinctSampleSize, std.DistinctSampleMethod)
				for col, truth := range map[string]float64{"id": fixtureRows, colSegment: 5, colCode: 7, "email": fixtureRows - fixtureRows/20} {
					d := findProfile(t, std, col).Distinct
					if d == nil || !d.Estimated || d.SampleSize == 0 {
						t.Errorf("%s distinct %+v", col, d)
						continue
					}
					t.Logf("%s: %v [%v, %v] by %s on %d values", col, d.Value, d.CI95[0], d.CI95[1], d.Method, d.SampleSize)
					if truth < d.CI95[0] || truth > d.CI95[1] || d.Value < d.CI95[0] || d.Value > d.CI95[1] {
						t.Errorf("%s distinct %v CI %v does not hold the truth %v", col, d.Value, d.CI95, truth)
					}
				}
			})

			t.Run("OneAggregateAndOneSampleStatement", func(t *testing.T) {
				aggregates := 0
				for _, r := range stdLog {
					if r.Operation != source.OpScan || r.Endpoint != source.EndpointPrimary || r.Err {
						t.Errorf("record %+v", r)
					}
					if strings.Contains(r.Statement, "count(*)") {
						aggregates++
					}
					if strings.Contains(r.Statement, "@exemplo") || strings.Contains(r.Statement, "'") {
						t.Errorf("statement holds a literal: %.200s", r.Statement)
					}
				}
				if aggregates != 1 || len(stdLog) < 2 || len(stdLog) > 3 {
					for _, r := range stdLog {
						t.Logf("%.300s", r.Statement)
					}
					t.Fatalf("%d statements, %d aggregates", len(stdLog), aggregates)
				}
			})

			t.Run("CountryESIsNotPortuguesePhone", func(t *testing.T) {
				es, err := src.Profile(ctx, clientesT, source.ProfileRequest{SampleSize: 1000, Country: "ES"})
				if err != nil {
					t.Fatal(err)
				}
				tel := findProfile(t, es, "telefone").Semantic
				if tel != nil && tel.Type == "phone_pt" {
					t.Fatalf("telefone is phone_pt with country ES: %+v", tel)
				}
				if tel == nil || tel.Type != "phone" || tel.Region != "ES" {
					t.Errorf("telefone with ES: %+v; want phone ES", tel)
				}
				if s := findProfile(t, es, "nif").Semantic; s != nil && s.Type == "nif_pt" {
					t.Errorf("nif_pt outside PT: %+v", s)
				}
				if s := findProfile(t, es, "codigo_postal").Semantic; s != nil {
					t.Errorf("postal code outside PT: %+v", s)
				}
			})

			t.Run("DeepCountsDistinctExactly", func(t *testing.T) {
				deep, err := src.Profile(ctx, clientesT, source.ProfileRequest{Depth: source.DepthDeep, SampleSize: 1000})
				if err != nil {
					t.Fatal(err)
				}
				for col, truth := range map[string]float64{"id": fixtureRows, colSegment: 5, colCode: 7, "email": fixtureRows - fixtureRows/20} {
					d := findProfile(t, deep, col).Distinct
					if d == nil || d.Estimated || d.Value != truth {
						t.Errorf("%s deep distinct %+v; want exact %v", col, d, truth)
					}
				}
			})

			t.Run("BasicReadsFirstRowsWithoutDistinct", func(t *testing.T) {
				basic, err := src.Profile(ctx, view, source.ProfileRequest{Depth: source.DepthBasic})
				if err != nil {
					t.Fatal(err)
				}
				if basic.RowCount != source.BasicRows || !basic.Truncated || basic.SampleSize > source.BasicRows {
					t.Errorf("basic RowCount %d truncated %v sample %d", basic.RowCount, basic.Truncated, basic.SampleSize)
				}
				for _, c := range basic.Columns {
					if c.Distinct != nil {
						t.Errorf("%s has distinct at basic", c.Name)
					}
				}
				if s := findProfile(t, basic, "email").Semantic; s == nil || s.Type != "email" {
					t.Errorf("email semantic at basic %+v", s)
				}
			})

			t.Run("ViewAtStandard", func(t *testing.T) {
				p, err := src.Profile(ctx, view, source.ProfileRequest{SampleSize: 500, DistinctSampleSize: 1000})
				if err != nil {
					t.Fatal(err)
				}
				want := int64(0)
				for _, r := range rows {
					if r.ativo {
						want++
					}
				}
				if p.RowCount != want || p.SampleMethod != "bernoulli" || p.DistinctSampleMethod != "bernoulli" {
					t.Errorf("view RowCount %d methods %s, %s; want %d bernoulli", p.RowCount, p.SampleMethod, p.DistinctSampleMethod, want)
				}
			})

			t.Run("WholeTableInSampleIsExact", func(t *testing.T) {
				p, err := src.Profile(ctx, clientesT, source.ProfileRequest{SampleSize: 20000})
				if err != nil {
					t.Fatal(err)
				}
				if p.SampleMethod != "full" || p.SampleSize != fixtureRows {
					t.Fatalf("method %s size %d", p.SampleMethod, p.SampleSize)
				}
				d := findProfile(t, p, "id").Distinct
				if d == nil || d.Estimated || d.Value != fixtureRows {
					t.Errorf("id distinct %+v", d)
				}
				if s := findProfile(t, p, "nif").Semantic; s == nil || s.Estimated || s.SampleSize != fixtureRows || s.Valid != fixtureRows*9/10 {
					t.Errorf("nif semantic %+v", s)
				}
			})

			t.Run("MarkerNeverLeaves", func(t *testing.T) {
				assertNoMarker(t, "tables", tables)
				assertNoMarker(t, "profile", std)
				assertNoMarker(t, "records", stdLog)
				for _, bad := range b.badDSNs(dsn) {
					r := &recorder{}
					s, err := connect.Open(ctx, b.kind, bad, source.Options{Recorder: r, StatementTimeout: 5 * time.Second})
					if err == nil {
						s.Close()
						t.Errorf("Open succeeded on a bad DSN")
						continue
					}
					var se *source.Error
					if !errors.As(err, &se) {
						t.Errorf("error type %T", err)
					}
					t.Logf("bad DSN: %v", err)
					if strings.Contains(err.Error(), marker) || strings.Contains(err.Error(), "127.0.0.1") {
						t.Errorf("error echoes the DSN: %v", err)
					}
					assertNoMarker(t, "error", err)
					assertNoMarker(t, "records", r.take())
					if verr := connect.ValidateDSN(b.kind, bad); verr != nil && strings.Contains(verr.Error(), marker) {
						t.Errorf("ValidateDSN echoes the DSN: %v", verr)
					}
				}
			})

			t.Run("StatementTimeoutApplies", func(t *testing.T) {
				b.slowView(t, db)
				// Discovery runs without the short timeout: on a loaded machine the catalog
				// queries alone may take longer than it, and only the profile is under test.
				full, err := connect.Open(ctx, b.kind, dsn, source.Options{})
				if err != nil {
					t.Fatal(err)
				}
				tables, err := full.Discover(ctx)
				full.Close()
				if err != nil {
					t.Fatal(err)
				}
				short, err := connect.Open(ctx, b.kind, dsn, source.Options{StatementTimeout: 300 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				defer short.Close()
				_, err = short.Profile(ctx, findTable(t, tables, "lenta"), source.ProfileRequest{})
				if !source.IsReason(err, source.ReasonTimeout) {
					t.Fatalf("Profile of a slow view: %v; want timeout", err)
				}
			})
		})
	}
}
