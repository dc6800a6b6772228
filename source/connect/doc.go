// Package connect implements the source port for PostgreSQL (pgx), MySQL and MariaDB
// (go-sql-driver) and SQLite (modernc, pure Go, opened read-only). It discovers tables and
// profiles each with one aggregate query plus bounded samples reduced in memory: a cheap
// one for masks and semantic types, and a row-level random one for the distinct
// estimates (the same read where the source cannot sample pages; see sampleTable).
//
// Every statement goes through one exec path that applies the statement timeout and hands
// a normalized copy of the statement (literals replaced by ?) to the Recorder.
package connect
