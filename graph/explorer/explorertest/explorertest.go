// Package explorertest drives the GraphQL explorer page in a browser the way a
// person does: open it, put an operation in the editor, press run, read the
// result. It is for tests only (it pulls in chromedp), which is why it is not part
// of package explorer, whose code ships in the binary.
package explorertest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia-data/vigia/internal/browsertest"
)

// GraphiQL's own class names (graphiql 3.x), the page's only moving parts a test touches.
const (
	// ExecuteButton is GraphiQL's run button.
	ExecuteButton = ".graphiql-execute-button"
	// QueryEditor is the CodeMirror of the operation being edited.
	QueryEditor = ".graphiql-query-editor .CodeMirror"
	// ResultPane is the CodeMirror that shows the response.
	ResultPane = ".graphiql-response .CodeMirror"
)

// RunQuery opens pageURL (the explorer, optionally with #token=svc_...) in the tab
// of ctx (browsertest.Browser.Context), replaces the editor's operation with
// query, clicks GraphiQL's run button and returns the result pane's text once it
// shows one. Each step is bounded by browsertest.StepTimeout.
func RunQuery(ctx context.Context, pageURL, query string) (string, error) {
	q, err := json.Marshal(query)
	if err != nil {
		return "", fmt.Errorf("explorertest: encode query: %w", err)
	}
	return run(ctx, pageURL, `document.querySelector(`+jsString(QueryEditor)+`).CodeMirror.setValue(`+string(q)+`);`, "")
}

// ExampleMenu is the explorer's Examples menu (a <select> of example ids).
const ExampleMenu = "#example-select"

// VariablesEditor is the CodeMirror of the operation's variables.
const VariablesEditor = ".graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror"

// RunExample opens pageURL like RunQuery, chooses the example id in the Examples menu
// as a person does, replaces the variables it opened with variables (JSON; none when
// empty), clicks run and returns the result pane's text.
func RunExample(ctx context.Context, pageURL, id, variables string) (string, error) {
	choose := `(() => {
		const menu = document.querySelector(` + jsString(ExampleMenu) + `);
		if (!Array.from(menu.options).some(o => o.value === ` + jsString(id) + `)) throw new Error("no such example");
		menu.value = ` + jsString(id) + `;
		menu.dispatchEvent(new Event("change", {bubbles: true}));
	})();`
	setVariables := ""
	if variables != "" {
		setVariables = `document.querySelector(` + jsString(VariablesEditor) + `).CodeMirror.setValue(` + jsString(variables) + `);`
	}
	return run(ctx, pageURL, choose, setVariables)
}

// RunDefaultQuery opens pageURL like RunQuery and runs the operation a new tab opens
// with, as it is.
func RunDefaultQuery(ctx context.Context, pageURL string) (string, error) {
	return run(ctx, pageURL, "", "")
}

// run opens the page, runs setOperation, lets GraphiQL take the new operation in, runs
// then (when set) and lets GraphiQL take that in too, and clicks run.
func run(ctx context.Context, pageURL, setOperation, then string) (string, error) {
	steps := []struct {
		what    string
		actions []chromedp.Action
	}{
		// From a blank page, so that a second run in the same tab loads the page afresh
		// (a URL differing only after # would not reload it).
		{"open the explorer", []chromedp.Action{chromedp.Navigate("about:blank"), chromedp.Navigate(pageURL)}},
		{"wait for GraphiQL", []chromedp.Action{
			chromedp.WaitVisible(ExecuteButton, chromedp.ByQuery),
			chromedp.Poll(`!!document.querySelector(`+jsString(QueryEditor)+`)?.CodeMirror`, nil),
		}},
		// CodeMirror's own API rather than typed keys: typing goes through
		// bracket auto-closing and autocompletion, which would change the text.
		// The result pane is emptied so that the wait below sees this run's answer.
		{"set the operation", []chromedp.Action{chromedp.Evaluate(`(() => {
			`+setOperation+`
			const out = document.querySelector(`+jsString(ResultPane)+`);
			if (out && out.CodeMirror) out.CodeMirror.setValue("");
			return true;
		})()`, nil)}},
		// GraphiQL reads the operation names of the new text after a short debounce; a
		// click before that runs the previous operation's name against the new text.
		{"let GraphiQL parse the operation", []chromedp.Action{chromedp.Sleep(600 * time.Millisecond)}},
		{"set the variables", []chromedp.Action{chromedp.Evaluate(`(() => { `+then+` return true; })()`, nil)}},
		{"let GraphiQL take the variables", []chromedp.Action{chromedp.Sleep(700 * time.Millisecond)}},
		{"click run", []chromedp.Action{chromedp.Click(ExecuteButton, chromedp.ByQuery)}},
	}
	for _, s := range steps {
		if err := browsertest.RunStep(ctx, s.actions...); err != nil {
			return "", fmt.Errorf("explorertest: %s: %w", s.what, err)
		}
	}
	var result string
	err := browsertest.RunStep(ctx, chromedp.Poll(`(() => {
		const el = document.querySelector(`+jsString(ResultPane)+`);
		const text = el && el.CodeMirror ? el.CodeMirror.getValue() : "";
		return text !== "" ? text : false;
	})()`, &result, chromedp.WithPollingTimeout(0)))
	if err != nil {
		return "", fmt.Errorf("explorertest: wait for the result: %w", err)
	}
	return result, nil
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
