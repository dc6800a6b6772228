package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
)

// nifOf completes eight digits with a NIF's check digit.
func nifOf(first8 string) string {
	sum := 0
	for i := 0; i < 8; i++ {
		sum += int(first8[i]-'0') * (9 - i)
	}
	check := (11 - sum%11) % 11 % 10
	return first8 + fmt.Sprint(check)
}

// fillCustomersPT makes a Portuguese customer master table of 20 rows: NIFs (two with a
// wrong check digit), postal codes, IBANs, phones and e-mails, plus a column of nothing
// in particular.
func fillCustomersPT(t *testing.T, src *sourceDB) {
	t.Helper()
	src.exec(t, `CREATE TABLE clientes_pt (id INTEGER PRIMARY KEY, nif VARCHAR(9), codigo_postal VARCHAR(8), iban VARCHAR(34),
		telefone VARCHAR(20), email VARCHAR(100), nota VARCHAR(50))`)
	for i := 1; i <= 20; i++ {
		nif := nifOf(fmt.Sprintf("2%07d", 1234000+i*7))
		if i <= 2 {
			nif = nif[:8] + fmt.Sprint((int(nif[8]-'0')+1)%10) // a typing error in the check digit
		}
		src.exec(t, fmt.Sprintf("INSERT INTO clientes_pt VALUES (%d, '%s', '%04d-%03d', 'PT50000201231234567890154', '91%07d', 'c%d@example.pt', 'x%d')",
			i, nif, 1000+i, i, 2345600+i, i, i))
	}
}

// Rule packs: the Portuguese customer master data pack previews, on a scanned table of
// each source kind, one rule per item on the columns of its semantic type; applying it
// creates them (twice: nothing more), and the next scan counts the two NIFs whose check
// digit is wrong with the rule's SQL in the source's own dialect.
func TestRulePackPortugueseCustomerMasterData(t *testing.T) {
	e := newWF(t, "rulepack")
	doc := e.Document(t)
	t.Run("List", func(t *testing.T) {
		r := doc.Do(t, http.MethodGet, "/api/v1/rule-packs", e.tok, nil)
		var packs []map[string]any
		r.JSON(t, &packs)
		if r.Status != 200 || r.Header.Get("X-Total-Count") != "1" || len(packs) != 1 || packs[0]["name"] != "pt_customer_master" ||
			packs[0]["version"] != "1.0.0" || len(packs[0]["items"].([]any)) != 6 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if r := doc.Do(t, http.MethodGet, "/api/v1/rule-packs/pt_customer_master", e.tok, nil); r.Status != 200 {
			t.Fatalf("get: %d", r.Status)
		}
		if r := doc.Do(t, http.MethodGet, "/api/v1/rule-packs/no_such_pack", e.tok, nil); r.Status != 404 {
			t.Fatalf("unknown pack: %d", r.Status)
		}
	})
	for _, kind := range []string{"postgres", "mysql", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			src := newSource(t, kind, e.root)
			fillCustomersPT(t, src)
			conn := e.connect(t, "pt-"+kind, kind, src.dsn)
			e.scan(t, conn)
			ds := e.dataset(t, conn, "clientes_pt")
			preview := doc.Do(t, http.MethodGet, "/api/v1/rule-packs/pt_customer_master/preview?dataset_id="+ds, e.tok, nil)
			var plan struct {
				New, Existing, Datasets int
				Matches                 []map[string]any
			}
			preview.JSON(t, &plan)
			got := map[string]string{}
			for _, m := range plan.Matches {
				got[m["item"].(string)] = m["column"].(string)
				if m["status"] != "new" || m["rule_id"] != nil {
					t.Fatalf("preview match %v", m)
				}
			}
			want := map[string]string{"nif_format": "nif", "nif_check_digit": "nif", "postal_code": "codigo_postal", "iban_format": "iban",
				"phone_pt": "telefone", "email": "email"}
			if preview.Status != 200 || plan.New != 6 || plan.Existing != 0 || plan.Datasets != 1 || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("preview %d %s", preview.Status, preview.Body)
			}
			if r := doc.Do(t, http.MethodPost, "/api/v1/rule-packs/pt_customer_master/apply", e.tok, map[string]any{"dataset_id": ds}); r.Status != 403 {
				t.Fatalf("token apply: %d", r.Status)
			}
			apply := doc.Do(t, http.MethodPost, "/api/v1/rule-packs/pt_customer_master/apply", e.member, map[string]any{"dataset_id": ds})
			apply.JSON(t, &plan)
			if apply.Status != 200 || plan.New != 6 || plan.Matches[0]["status"] != "created" || plan.Matches[0]["rule_id"] == nil {
				t.Fatalf("apply %d %s", apply.Status, apply.Body)
			}
			again := doc.Do(t, http.MethodPost, "/api/v1/rule-packs/pt_customer_master/apply", e.member, map[string]any{"connection_id": conn})
			again.JSON(t, &plan)
			if again.Status != 200 || plan.New != 0 || plan.Existing != 6 {
				t.Fatalf("second apply %d %s", again.Status, again.Body)
			}
			e.scan(t, conn)
			rules, _ := e.list(t, "/api/v1/rules?dataset_id="+ds, e.tok)
			if len(rules) != 6 {
				t.Fatalf("%d rules", len(rules))
			}
			for _, r := range rules {
				lr, _ := r["last_result"].(map[string]any)
				wantObserved, wantStatus := 0.0, "passed"
				if r["rule_type"] == "custom_sql" {
					wantObserved, wantStatus = 2, "failed"
				}
				if lr == nil || lr["status"] != wantStatus || lr["observed"] != wantObserved {
					t.Errorf("%s (%s): %v", r["name"], r["rule_type"], lr)
				}
				if !strings.HasSuffix(r["name"].(string), "pt_customer_master 1.0.0") {
					t.Errorf("name %v", r["name"])
				}
			}
		})
	}
	t.Run("ForeignScopeIs404", func(t *testing.T) {
		other := e.otherWorkspace(t, "rulepack-other")
		oc := other.MustConnection(t, other.ws, "c")
		ods := other.MustDataset(t, other.ws, oc, "public", "x")
		for _, p := range []string{"?dataset_id=" + ods, "?connection_id=" + oc, "?dataset_id=" + vigia.NewID()} {
			if r := doc.Do(t, http.MethodGet, "/api/v1/rule-packs/pt_customer_master/preview"+p, e.tok, nil); r.Status != 404 {
				t.Fatalf("%s: %d", p, r.Status)
			}
		}
		if r := doc.Do(t, http.MethodPost, "/api/v1/rule-packs/pt_customer_master/apply", e.member, map[string]any{"dataset_id": ods}); r.Status != 404 {
			t.Fatalf("apply: %d", r.Status)
		}
		if r := doc.Do(t, http.MethodPost, "/api/v1/rule-packs/pt_customer_master/apply", e.member,
			map[string]any{"dataset_id": ods, "connection_id": oc}); r.Status != 422 {
			t.Fatalf("both: %d", r.Status)
		}
	})
}
