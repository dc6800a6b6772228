// Package demo builds Vigia's industry demo packs: small, realistic Portuguese source
// databases (ERP, e-commerce, payments, health) that a newcomer can scan in under a minute.
//
// Each pack has four to eight tables with primary and foreign keys, two or three views (and
// in Postgres one materialized view) for lineage to read, and columns that semantic
// detection recognises: NIF, phone numbers, e-mail, postal codes, IBAN, UUIDs, dates kept as
// text. Every pack plants documented defects (Pack.Defects): missing e-mails, repeated
// natural keys, invalid check digits, orphans, a stale table, outliers, and a type change
// (and in the ERP pack a rename) that Mutate applies before the second scan.
//
// All values are synthesised from a seeded generator: names are drawn from lists of common
// first names and surnames, never taken from real people. The generators are exported so
// other tests can reuse values whose validity is known.
//
// Build writes through database/sql and imports no driver: open SQLite with
// modernc.org/sqlite (driver "sqlite") and Postgres with pgx stdlib (driver "pgx").
package demo
