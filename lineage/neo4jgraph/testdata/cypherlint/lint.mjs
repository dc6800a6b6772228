// lint.mjs validates Cypher statements with Neo4j's own Cypher language library
// (@neo4j-cypher/language-support, pinned in package-lock.json): syntax, semantic
// analysis (variables out of scope, wrong argument counts, type errors) and, with the
// schema below, unknown functions, labels, relationship types and properties, and
// syntax deprecated in Neo4j 5.
//
// Input (stdin): {"labels": [...], "relationshipTypes": [...], "propertyKeys": [...],
//   "statements": [{"name": "...", "query": "...", "parameters": ["ws", ...]}]}
// Output (stdout): [{"name": "...", "diagnostics": [{"severity": 1, "message": "...",
//   "line": 0, "character": 0}]}] — every diagnostic, errors (1) and warnings (2) alike.
import { lintCypherQuery, testData } from '@neo4j-cypher/language-support';

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const req = JSON.parse(input);

// The library only knows which functions and procedures exist from a schema; the
// registry its own test suite carries is the Neo4j 5/25 built-in set.
const builtins = testData.mockSchema;

const out = [];
for (const st of req.statements) {
  const parameters = {};
  for (const p of st.parameters ?? []) parameters[p] = null;
  const schema = {
    labels: req.labels,
    relationshipTypes: req.relationshipTypes,
    propertyKeys: req.propertyKeys,
    functions: builtins.functions,
    procedures: builtins.procedures,
    parameters,
    defaultLanguage: 'CYPHER 5',
  };
  const { diagnostics } = lintCypherQuery(st.query, schema);
  out.push({
    name: st.name,
    diagnostics: diagnostics.map((d) => ({
      severity: d.severity,
      message: d.message,
      line: d.range.start.line,
      character: d.range.start.character,
    })),
  });
}
process.stdout.write(JSON.stringify(out));
