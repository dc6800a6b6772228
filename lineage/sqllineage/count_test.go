package sqllineage_test

import (
	"testing"

	"github.com/vigia-data/vigia/lineage/sqllineage"
	"github.com/vigia-data/vigia/source"
)

func TestCheckCountGivesTheRehearsalReasons(t *testing.T) {
	p := sqllineage.Parser{}
	allowed := map[string]bool{"count": true, "regexp": true, "lower": true}
	tb := source.Table{Schema: "crm", Name: "contactos"}
	cases := []struct{ dialect, sql, want string }{
		{"postgres", `SELECT count(*) FROM "crm"."contactos" WHERE lower("tel") ~ '^[0-9]+$'`, ""},
		{"postgres", `SELECT count(*) FROM "crm"."contactos" WHERE pg_read_file('/etc/passwd') IS NULL`, "forbidden"},
		{"postgres", `SELECT count(*) FROM "crm"."contactos" WHERE upper("tel") = 'X'`, "function_not_allowed"},
		{"postgres", `SELECT count(*) FROM "crm"."contactos" WHERE id IN (SELECT id FROM "crm"."outra")`, "unknown_table"},
		{"postgres", `SELECT count(*) FROM "crm"."contactos" WHERE true; DELETE FROM "crm"."contactos"`, "not_select"},
		{"postgres", `WITH d AS (DELETE FROM "crm"."contactos" RETURNING id) SELECT count(*) FROM d`, "forbidden"},
		{"postgres", `SELECT count(*) FROM "crm"."contactos" FOR UPDATE`, "not_select"},
		{"mysql", "SELECT count(*) FROM `crm`.`contactos` WHERE `tel` REGEXP '^[0-9]+$'", ""},
		{"mysql", "SELECT count(*) FROM `crm`.`contactos` WHERE sleep(5) = 0", "forbidden"},
		{"mysql", "SELECT count(*) FROM `crm`.`contactos` WHERE md5(`tel`) = 'x'", "function_not_allowed"},
		{"mysql", "SELECT count(*) FROM `crm`.`contactos` WHERE id IN (SELECT id FROM `mysql`.`user`)", "unknown_table"},
		{"mysql", "UPDATE `crm`.`contactos` SET tel = ''", "not_select"},
		{"sqlite", `SELECT count(*) FROM "contactos" WHERE regexp('^[0-9]+$', "tel")`, ""},
		{"sqlite", `SELECT count(*) FROM "contactos" WHERE load_extension('x') IS NULL`, "forbidden"},
		{"sqlite", `SELECT count(*) FROM "contactos" c JOIN "outra" o ON o.id = c.id`, "unknown_table"},
	}
	for _, c := range cases {
		got, err := p.CheckCount(c.dialect, c.sql, tb, allowed)
		if err != nil || got != c.want {
			t.Errorf("%s %q: %q %v, want %q", c.dialect, c.sql, got, err, c.want)
		}
	}
}
