package explorer

import "encoding/json"

// Example is an analyst query the explorer offers from its Examples menu: a title in
// Portuguese and English, the operation, and its variables (JSON) to fill in.
type Example struct {
	ID      string `json:"id"`
	TitlePT string `json:"title_pt"`
	TitleEN string `json:"title_en"`
	Query   string `json:"query"`
	// Variables is the JSON object the variables editor opens with; ids to fill in are
	// empty strings.
	Variables string `json:"variables"`
}

// Examples are the analyst queries of the explorer's Examples menu. Each runs against
// the served schema in app's tests (TestExplorerExamplesRunAgainstTheSchema, and in
// Chromium TestExplorerExamplesRunInChromium).
var Examples = []Example{
	{
		ID:      "failing-datasets",
		TitlePT: "Datasets com veredicto a falhar e os seus donos",
		TitleEN: "Datasets failing their verdict, with their owners",
		Query: `# Datasets whose latest verdict is fail, the rules
# that fail them and the owners of their data products.
query FailingDatasets {
  datasets(verdict: "fail", limit: 100) {
    total
    items {
      name
      latestScore
      verdict {
        verdict
        failingRules { ruleType severity }
      }
      domains { name ownerName }
    }
  }
}
`,
		Variables: `{}`,
	},
	{
		ID:      "column-impact",
		TitlePT: "O que parte a jusante se esta coluna mudar",
		TitleEN: "What breaks downstream if this column changes",
		Query: `# Fill in a dataset id and one of its columns in
# Variables (below). Datasets you cannot see are
# listed as restricted, without a name.
query ColumnImpact($dataset: ID!, $column: String!) {
  dataset(id: $dataset) {
    name
    impact(column: $column) {
      reachTotal
      truncated
      impactNote
      datasets { name restricted hops impact columns }
      exposures { name type direct }
    }
  }
}
`,
		Variables: `{"dataset": "", "column": ""}`,
	},
	{
		ID:      "incident-consumers",
		TitlePT: "Consumidores de datasets sob um incidente crítico aberto",
		TitleEN: "Consumers of datasets under an open critical incident",
		Query: `# Open critical incidents with the consumers of
# their root dataset and of the datasets downstream
# of it.
query IncidentConsumers {
  incidents(status: "open", severity: "critical") {
    total
    items {
      title
      severity
      root {
        name
        consumers { name kind lastDecision lastConsumedAt }
        downstream(hops: 3) {
          ... on Dataset { name consumers { name kind lastDecision } }
          ... on RestrictedDataset { ref }
        }
      }
      exposures { node name type }
    }
  }
}
`,
		Variables: `{}`,
	},
	{
		ID:      "upstream-critical-issues",
		TitlePT: "Colunas, nulos e mín./máx., com as falhas críticas a montante",
		TitleEN: "Columns, nulls and min/max, with the critical issues upstream",
		Query: `# Datasets with their columns' null counts and
# min/max, and their upstream datasets by name with
# their open critical issues.
query UpstreamCriticalIssues {
  datasets(limit: 20) {
    items {
      name
      columns { name nullCount min max }
      upstream {
        ... on Dataset { name issues(severity: ["critical"], status: ["open"]) { title } }
        ... on RestrictedDataset { ref }
      }
    }
  }
}
`,
		Variables: `{}`,
	},
}

// examplesJSON is the Examples menu's data as the page carries it.
func examplesJSON() string {
	b, err := json.Marshal(Examples)
	if err != nil {
		return "[]"
	}
	return string(b)
}
