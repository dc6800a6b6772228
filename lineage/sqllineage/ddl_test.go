package sqllineage_test

import (
	"errors"
	"testing"

	"github.com/vigia-data/vigia/lineage/sqllineage"
)

func TestCheckDDLAcceptsOnlySchemaChangesTheDialectParses(t *testing.T) {
	p := sqllineage.Parser{}
	ok := []struct{ dialect, sql string }{
		{"postgres", `ALTER TABLE "s"."t" ALTER COLUMN "d" TYPE date USING to_date("d", 'DD/MM/YYYY')`},
		{"postgres", `ALTER TABLE "t" RENAME COLUMN "OrderDate" TO "order_date"; ALTER TABLE "t" RENAME COLUMN "A b" TO "a_b"`},
		{"mysql", "ALTER TABLE `s`.`t` ADD COLUMN `id` BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY FIRST"},
		{"sqlite", "CREATE UNIQUE INDEX `ux_t_code` ON `t` (`code`)"},
	}
	for _, c := range ok {
		if err := p.CheckDDL(c.dialect, c.sql); err != nil {
			t.Errorf("%s %q: %v", c.dialect, c.sql, err)
		}
	}
	bad := []struct {
		dialect, sql string
		want         error
	}{
		{"postgres", `ALTER TABLE "t" ALTER COLUMN`, sqllineage.ErrUnparsable},
		{"postgres", `ALTER TABLE "t" ADD PRIMARY KEY ("id"); DROP TABLE "u"`, sqllineage.ErrNotDDL},
		{"mysql", "ALTER TABLE `t` MODIFY", sqllineage.ErrUnparsable},
		{"mysql", "SELECT 1", sqllineage.ErrNotDDL},
		{"sqlite", `DELETE FROM "t"`, sqllineage.ErrNotDDL},
		{"oracle", `ALTER TABLE t ADD c int`, sqllineage.ErrUnsupportedDialect},
	}
	for _, c := range bad {
		if err := p.CheckDDL(c.dialect, c.sql); !errors.Is(err, c.want) {
			t.Errorf("%s %q: %v, want %v", c.dialect, c.sql, err, c.want)
		}
	}
}
