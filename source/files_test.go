package source

import "testing"

func TestFileDatasetName(t *testing.T) {
	for in, want := range map[string]string{
		"customers.csv":                     "customers.csv",
		"./customers.csv":                   "customers.csv",
		"drops/2024/customers.csv":          "drops/2024/customers.csv",
		"sales/*.parquet":                   "sales",
		"sales/**/*.parquet":                "sales",
		"sales/year=2024/month=1/a.parquet": "sales",
		"sales/year=*/*.parquet":            "sales",
		"logs/app-?.json":                   "logs",
		"logs/{a,b}.json":                   "logs",
		`sales\part-0.parquet`:              "sales/part-0.parquet",
		"*.csv":                             "",
		"":                                  "",
		"/abs/file.parquet":                 "",
		"../outside.csv":                    "",
		"a/../../outside.csv":               "",
		".":                                 "",
	} {
		if got := FileDatasetName(in); got != want {
			t.Errorf("FileDatasetName(%q) = %q, want %q", in, got, want)
		}
	}
}
