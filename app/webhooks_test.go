package app_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app/apptest"
	"github.com/vigia-data/vigia/event"
	"github.com/vigia-data/vigia/webhook/delivery"
)

var uuidExactRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Must show 1: http:// and every internal spelling is refused on save, and the URL is
// not echoed.
func TestChannelURLsRefusedOnSave(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ws := env.MustWorkspace(t, "ssrf")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	cases := []struct{ url, code string }{
		{"http://" + receiverHost + "/hook", "url_scheme"},
		{"https://127.1/hook", "destination_refused"},
		{"https://2130706433/hook", "destination_refused"},
		{"https://0x7f000001/hook", "destination_refused"},
		{"https://[::ffff:127.0.0.1]/hook", "destination_refused"},
		{"https://169.254.169.254/latest/meta-data", "destination_refused"},
		{"https://[fd00:ec2::254]/hook", "destination_refused"},
		{"https://100.100.100.200/hook", "destination_refused"},
		{"https://user:pass@" + receiverHost + "/hook", "url_userinfo"},
		{"https://nowhere.invalid/hook", "unresolvable"},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			r := env.Do(t, http.MethodPost, "/api/v1/notification-channels", admin, map[string]any{
				"name": "x", "kind": "webhook", "config": map[string]any{"webhook_url": c.url}})
			e := decodeError(t, r)
			if r.Status != http.StatusUnprocessableEntity || e.Code != "validation_error" ||
				!strings.Contains(string(e.Detail), `"type":"`+c.code+`"`) {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			host := c.url[strings.Index(c.url, "//")+2:]
			host = host[:strings.IndexAny(host, "/")]
			for _, leak := range []string{c.url, host, "user:pass", "meta-data"} {
				if strings.Contains(string(r.Body), leak) {
					t.Fatalf("response echoes %q: %s", leak, r.Body)
				}
			}
		})
	}
	t.Run("PatchIsCheckedToo", func(t *testing.T) {
		rcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
		id, _ := MustChannel(t, env, admin, map[string]any{"name": "ok", "config": map[string]any{"webhook_url": rcv.URL}})
		r := env.Do(t, http.MethodPatch, "/api/v1/notification-channels/"+id, admin,
			map[string]any{"config": map[string]any{"webhook_url": "https://0x7f000001/x"}})
		if r.Status != http.StatusUnprocessableEntity || strings.Contains(string(r.Body), "0x7f000001") {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	if strings.Contains(env.Logs.String(), urlMarker) {
		t.Fatal("a webhook URL reached the logs")
	}
}

// Must show 2: a loopback TLS receiver admitted by the allowlist gets a service.test
// whose signature verifies with the secret returned at creation, with the four headers,
// their legacy twins and a body matching part 6.
func TestChannelTestDeliveryIsSigned(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ws := env.MustWorkspace(t, "signed")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	rcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	r := env.Do(t, http.MethodPost, "/api/v1/notification-channels", admin, map[string]any{
		"name": "Equipa de dados", "kind": "webhook", "config": map[string]any{"webhook_url": rcv.URL, "locale": "en"},
		"signing_secret": "whsec_chosen_by_caller"})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var ch map[string]any
	r.JSON(t, &ch)
	secret := ch["signing_secret"].(string)
	if !regexp.MustCompile(`^whsec_[0-9a-f]{64}$`).MatchString(secret) || secret == "whsec_chosen_by_caller" {
		t.Fatalf("signing secret %q", secret)
	}
	cfg := ch["config"].(map[string]any)
	if strings.Contains(string(r.Body), urlMarker) || !strings.HasPrefix(cfg["webhook_url"].(string), "https://"+receiverHost+":") ||
		ch["signed"] != true || ch["min_severity"] != "warning" || fmt.Sprint(ch["event_kinds"]) != "[alerts]" {
		t.Fatalf("channel out: %s", r.Body)
	}
	id := ch["id"].(string)

	before := time.Now().Unix()
	tr := env.Do(t, http.MethodPost, "/api/v1/notification-channels/"+id+"/test", admin, nil)
	var res map[string]any
	tr.JSON(t, &res)
	if tr.Status != 200 || res["ok"] != true || res["result"] != "accepted_signed" || res["signed"] != true ||
		res["status_code"] != float64(204) || !uuidExactRE.MatchString(res["delivery_id"].(string)) {
		t.Fatalf("test: %d %s", tr.Status, tr.Body)
	}
	if strings.Contains(string(tr.Body), urlMarker) || strings.Contains(string(tr.Body), receiverHost) {
		t.Fatalf("test result names the URL: %s", tr.Body)
	}
	got := rcv.requests()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	h, body := got[0].Header, got[0].Body
	ts, err := strconv.ParseInt(h.Get("X-Service-Timestamp"), 10, 64)
	if err != nil || ts < before-1 || ts > time.Now().Unix()+1 {
		t.Fatalf("timestamp %q", h.Get("X-Service-Timestamp"))
	}
	if err := delivery.Verify(secret, h.Get("X-Service-Signature"), ts, body, time.Now(), 0); err != nil {
		t.Fatalf("signature does not verify with the secret returned at creation: %v", err)
	}
	if h.Get("X-Service-Event") != "service.test" || h.Get("X-Service-Delivery") != res["delivery_id"] ||
		h.Get("Content-Type") != "application/json" || h.Get("Idempotency-Key") != "" {
		t.Fatalf("headers %v", h)
	}
	for _, name := range []string{"Event", "Delivery", "Timestamp", "Signature"} {
		if v := h.Get("X-Vigil-" + name); v == "" || v != h.Get("X-Service-"+name) {
			t.Fatalf("legacy header X-Vigil-%s = %q, want %q", name, v, h.Get("X-Service-"+name))
		}
	}
	b := decodeBody(t, body)
	requireKeys(t, b)
	if b["event"] != "service.test" || b["workspace_id"] != ws || b["code"] != "channel_test" ||
		fmt.Sprint(b["params"]) != "map[]" || fmt.Sprint(b["alerts"]) != "[]" || fmt.Sprint(b["incidents"]) != "[]" ||
		b["title"] != "Test of channel «Equipa de dados»" || b["body"] != "This is a test delivery from Vigia." {
		t.Fatalf("body %s", body)
	}
	if at, err := time.Parse(time.RFC3339, b["occurred_at"].(string)); err != nil || !strings.HasSuffix(b["occurred_at"].(string), "Z") || at.IsZero() {
		t.Fatalf("occurred_at %v", b["occurred_at"])
	}

	t.Run("ChannelKeepsLastDelivery", func(t *testing.T) {
		var c map[string]any
		env.Do(t, http.MethodGet, "/api/v1/notification-channels/"+id, admin, nil).JSON(t, &c)
		if c["last_delivery_status"] != "delivered" || c["last_delivery_at"] == nil || c["last_delivery_error"] != nil {
			t.Fatalf("channel %v", c)
		}
	})
	t.Run("RotationSwitchesAtOnce", func(t *testing.T) {
		var rot map[string]any
		rr := env.Do(t, http.MethodPost, "/api/v1/notification-channels/"+id+"/rotate-secret", admin, nil)
		rr.JSON(t, &rot)
		fresh, _ := rot["signing_secret"].(string)
		if rr.Status != 200 || fresh == secret || !strings.HasPrefix(fresh, "whsec_") {
			t.Fatalf("rotate: %d %s", rr.Status, rr.Body)
		}
		env.Do(t, http.MethodPost, "/api/v1/notification-channels/"+id+"/test", admin, nil)
		last := rcv.requests()[1]
		ts, _ := strconv.ParseInt(last.Header.Get("X-Service-Timestamp"), 10, 64)
		if delivery.Verify(fresh, last.Header.Get("X-Service-Signature"), ts, last.Body, time.Now(), 0) != nil ||
			delivery.Verify(secret, last.Header.Get("X-Service-Signature"), ts, last.Body, time.Now(), 0) == nil {
			t.Fatal("after rotation the new secret must verify and the old one must not")
		}
	})
	t.Run("UnsignedLegacyChannel", func(t *testing.T) {
		if _, err := env.DB.Pool().Exec(context.Background(), `UPDATE notification_channels SET secret_sealed = NULL WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		var res map[string]any
		env.Do(t, http.MethodPost, "/api/v1/notification-channels/"+id+"/test", admin, nil).JSON(t, &res)
		last := rcv.requests()[2]
		if res["result"] != "accepted_unsigned" || res["signed"] != false || last.Header.Get("X-Service-Signature") != "" ||
			last.Header.Get("X-Vigil-Signature") != "" || last.Header.Get("X-Service-Delivery") == "" {
			t.Fatalf("unsigned test: %v %v", res, last.Header)
		}
	})
	t.Run("SecretsStaySealedAndOutOfLogs", func(t *testing.T) {
		var n int
		if err := env.DB.Pool().QueryRow(context.Background(), `SELECT
			(SELECT count(*) FROM notification_channels WHERE position(convert_to($1, 'UTF8') in url_sealed) > 0
			   OR position(convert_to($2, 'UTF8') in coalesce(secret_sealed, '')) > 0)
			+ (SELECT count(*) FROM webhook_deliveries WHERE position(convert_to($1, 'UTF8') in body) > 0
			   OR attempt_log::text LIKE '%' || $1 || '%' OR coalesce(last_error, '') LIKE '%' || $1 || '%')
			+ (SELECT count(*) FROM jobs WHERE args::text LIKE '%' || $1 || '%' OR coalesce(last_error, '') LIKE '%' || $1 || '%')
			+ (SELECT count(*) FROM activity_log WHERE details::text LIKE '%' || $1 || '%' OR details::text LIKE '%whsec_%')`,
			urlMarker, secret).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%d rows hold the URL or the secret in clear (%v)", n, err)
		}
		if logs := env.Logs.String(); strings.Contains(logs, urlMarker) || strings.Contains(logs, "whsec_") {
			t.Fatal("the URL or a secret reached the logs")
		}
	})
	t.Run("SignatureRefusedReceiver", func(t *testing.T) {
		refuser := MustReceiver(t, receiverHost, status(http.StatusUnauthorized))
		rid, _ := MustChannel(t, env, admin, map[string]any{"name": "refuser", "config": map[string]any{"webhook_url": refuser.URL}})
		var res map[string]any
		env.Do(t, http.MethodPost, "/api/v1/notification-channels/"+rid+"/test", admin, nil).JSON(t, &res)
		if res["ok"] != false || res["result"] != "signature_refused" || res["status_code"] != float64(401) || len(refuser.requests()) != 1 {
			t.Fatalf("refused test: %v", res)
		}
	})
}

// deliveryOf reads a delivery's status and attempts from the database.
func deliveryOf(tb testing.TB, env *apptest.Env, channelID string) (id, status string, attempts int) {
	tb.Helper()
	err := env.DB.Pool().QueryRow(context.Background(), `SELECT id::text, status, attempts FROM webhook_deliveries
		WHERE channel_id = $1 AND NOT test ORDER BY created_at DESC LIMIT 1`, channelID).Scan(&id, &status, &attempts)
	if err != nil {
		return "", "", 0
	}
	return id, status, attempts
}

// verdictEvent makes a dataset and an outbox verdict event about it.
func verdictEvent(tb testing.TB, env *apptest.Env, ws string) (datasetID, eventID string) {
	tb.Helper()
	datasetID = env.MustDataset(tb, ws, env.MustConnection(tb, ws, "c-"+vigia.NewUUID()[:6]), "public", "vendas")
	scanID := vigia.NewID()
	eventID = MustEvent(tb, env, ws, "dataset.verdict_changed", "dataset", datasetID,
		event.IdempotencyKey(datasetID, scanID, "dataset.verdict_changed", ""),
		map[string]any{"dataset_id": datasetID, "from": "pass", "to": "fail", "score": 41.5, "scan_id": scanID})
	return datasetID, eventID
}

func requireGap(tb testing.TB, got []hookRequest, i int, want time.Duration) {
	tb.Helper()
	gap := got[i].At.Sub(got[i-1].At)
	// Never early: the contract's schedule less 10%. Late by at most the contract's 10%
	// plus pickUp, the time a busy machine's worker takes to claim a due delivery (the
	// schedule itself is checked exactly by delivery.TestBackoff); this test tells the
	// 1 s, 5 s and 25 s steps apart, which a wall clock on a loaded CI box can do.
	const pickUp = 2 * time.Second
	lo, hi := want-want/10, want+want/10+pickUp
	tb.Logf("attempt %d: %v after attempt %d (contract %v)", i+1, gap, i, want)
	if gap < lo || gap > hi {
		tb.Fatalf("attempt %d came %v after attempt %d; the contract says %v ±10%% (late by at most %v more)", i+1, gap, i, want, pickUp)
	}
}

// Must show 3: a receiver answering 500 gets exactly 4 sends at +1 s, +5 s, +25 s with
// the same X-Service-Delivery and fresh timestamps and signatures, and the channel ends
// failed; a 401 gets one send; a 302 to another host is not followed.
func TestDeliveryRetrySchedule(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ws := env.MustWorkspace(t, "retry")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	kinds := []string{"alerts", "dataset.verdict_changed"}
	failing := MustReceiver(t, receiverHost, status(http.StatusInternalServerError))
	refusing := MustReceiver(t, receiverHost, status(http.StatusUnauthorized))
	elsewhere := MustReceiver(t, otherHost, status(http.StatusNoContent))
	redirecting := MustReceiver(t, receiverHost, func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL, http.StatusFound)
	})
	failID, _ := MustChannel(t, env, admin, map[string]any{"name": "500", "config": map[string]any{"webhook_url": failing.URL}, "event_kinds": kinds})
	refuseID, _ := MustChannel(t, env, admin, map[string]any{"name": "401", "config": map[string]any{"webhook_url": refusing.URL}, "event_kinds": kinds})
	redirID, _ := MustChannel(t, env, admin, map[string]any{"name": "302", "config": map[string]any{"webhook_url": redirecting.URL}, "event_kinds": kinds})
	MustRunWorkers(t, env)
	verdictEvent(t, env, ws)

	got := failing.waitFor(t, "", 4)
	requireGap(t, got, 1, time.Second)
	requireGap(t, got, 2, 5*time.Second)
	requireGap(t, got, 3, 25*time.Second)
	id := got[0].Header.Get("X-Service-Delivery")
	seenTS, seenSig := map[string]bool{}, map[string]bool{}
	for i, r := range got {
		if r.Header.Get("X-Service-Delivery") != id || r.Header.Get("Idempotency-Key") == "" {
			t.Fatalf("attempt %d headers %v", i+1, r.Header)
		}
		seenTS[r.Header.Get("X-Service-Timestamp")] = true
		seenSig[r.Header.Get("X-Service-Signature")] = true
		if string(r.Body) != string(got[0].Body) {
			t.Fatalf("attempt %d changed the body", i+1)
		}
	}
	if len(seenTS) != 4 || len(seenSig) != 4 {
		t.Fatalf("timestamps %d and signatures %d distinct, want 4 each", len(seenTS), len(seenSig))
	}
	eventually(t, "the 500 delivery to fail", func() bool { _, st, _ := deliveryOf(t, env, failID); return st == "failed" })
	if _, _, n := deliveryOf(t, env, failID); n != 4 || len(failing.requests()) != 4 {
		t.Fatalf("%d attempts recorded, %d sends; want 4", n, len(failing.requests()))
	}
	var ch map[string]any
	env.Do(t, http.MethodGet, "/api/v1/notification-channels/"+failID, admin, nil).JSON(t, &ch)
	if ch["last_delivery_status"] != "failed" || ch["last_delivery_error"] != "http 500" {
		t.Fatalf("channel after failure: %v", ch)
	}
	var log []map[string]any
	lr := env.Do(t, http.MethodGet, "/api/v1/notification-channels/"+failID+"/deliveries", admin, nil)
	lr.JSON(t, &log)
	if lr.Header.Get("X-Total-Count") != "1" || len(log[0]["attempts"].([]any)) != 4 || log[0]["id"] != id {
		t.Fatalf("delivery log: %s", lr.Body)
	}

	eventually(t, "the 401 delivery to fail", func() bool { _, st, _ := deliveryOf(t, env, refuseID); return st == "failed" })
	if n := len(refusing.requests()); n != 1 {
		t.Fatalf("401 receiver got %d sends, want 1", n)
	}
	eventually(t, "the 302 delivery to fail", func() bool { _, st, _ := deliveryOf(t, env, redirID); return st == "failed" })
	env.Do(t, http.MethodGet, "/api/v1/notification-channels/"+redirID, admin, nil).JSON(t, &ch)
	if n := len(redirecting.requests()); n != 1 || len(elsewhere.requests()) != 0 || ch["last_delivery_error"] != "redirect not followed" {
		t.Fatalf("302: %d sends, %d followed, channel %v", n, len(elsewhere.requests()), ch)
	}
	// A delivery is recorded failed inside its job, which completes just after: wait
	// for the jobs to end rather than expect them ended at that instant.
	eventually(t, "no delivery job left", func() bool {
		var pending int
		err := env.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM jobs WHERE kind = 'webhook.delivery'
			AND workspace_id = $1 AND status IN ('available', 'running')`, ws).Scan(&pending)
		return err == nil && pending == 0
	})
}

// Must show 4: a restart between the 2nd and 3rd attempt still produces the 3rd and
// 4th: the schedule lives in the database, and a fresh process resumes it.
func TestRestartDuringBackoffResumesSchedule(t *testing.T) {
	cfg := webhookConfig(t)
	first := apptest.MustStart(t, cfg)
	ws := first.MustWorkspace(t, "restart")
	admin := first.MustSession(t, ws, vigia.RoleAdmin)
	failing := MustReceiver(t, receiverHost, status(http.StatusServiceUnavailable))
	chID, _ := MustChannel(t, first, admin, map[string]any{"name": "503", "config": map[string]any{"webhook_url": failing.URL},
		"event_kinds": []string{"dataset.verdict_changed"}})
	stop := MustRunWorkers(t, first)
	verdictEvent(t, first, ws)
	failing.waitFor(t, "", 2)
	eventually(t, "the 2nd attempt to be recorded and the job to wait", func() bool {
		var n int
		err := first.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries d JOIN jobs j
			ON j.args->>'delivery_id' = d.id::text WHERE d.channel_id = $1 AND d.attempts = 2 AND j.status = 'available'`, chID).Scan(&n)
		return err == nil && n == 1
	})
	stop()
	if n := len(failing.requests()); n != 2 {
		t.Fatalf("%d sends before the restart, want 2", n)
	}

	second := apptest.MustStart(t, cfg) // a fresh process on the same database
	MustRunWorkers(t, second)
	got := failing.waitFor(t, "", 4)
	requireGap(t, got, 2, 5*time.Second)
	requireGap(t, got, 3, 25*time.Second)
	for _, r := range got {
		if r.Header.Get("X-Service-Delivery") != got[0].Header.Get("X-Service-Delivery") {
			t.Fatal("the delivery id changed across the restart")
		}
	}
	eventually(t, "the delivery to fail", func() bool { _, st, _ := deliveryOf(t, second, chID); return st == "failed" })
	if _, _, n := deliveryOf(t, second, chID); n != 4 || len(failing.requests()) != 4 {
		t.Fatalf("%d attempts, %d sends; want 4", n, len(failing.requests()))
	}
}

// Must show 5: a name that resolves to a public address when saved and to 127.0.0.1 at
// send: no connection reaches 127.0.0.1, the delivery fails with destination refused
// and is not retried.
func TestDNSRebindingIsRefusedAtDialTime(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ws := env.MustWorkspace(t, "rebind")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	ln := MustListen(t)
	_, port, _ := strings.Cut(ln.Addr().String(), ":")
	url := "https://" + rebindHost + ":" + port + "/hook"
	id, _ := MustChannel(t, env, admin, map[string]any{"name": "rebind", "config": map[string]any{"webhook_url": url},
		"event_kinds": []string{"dataset.verdict_changed"}})

	var res map[string]any
	env.Do(t, http.MethodPost, "/api/v1/notification-channels/"+id+"/test", admin, nil).JSON(t, &res)
	if res["ok"] != false || res["result"] != "destination_refused" || res["status_code"] != nil {
		t.Fatalf("test: %v", res)
	}
	MustRunWorkers(t, env)
	verdictEvent(t, env, ws)
	eventually(t, "the delivery to fail", func() bool { _, st, _ := deliveryOf(t, env, id); return st == "failed" })
	if _, _, n := deliveryOf(t, env, id); n != 1 {
		t.Fatalf("%d attempts, want 1 (no retry after a refusal)", n)
	}
	var ch map[string]any
	env.Do(t, http.MethodGet, "/api/v1/notification-channels/"+id, admin, nil).JSON(t, &ch)
	if ch["last_delivery_status"] != "failed" || ch["last_delivery_error"] != "destination refused" {
		t.Fatalf("channel %v", ch)
	}
	requireAcceptedNothing(t, ln)
}

// Must show 7: an API token gets 403 on every channel operation; viewers too.
func TestChannelOperationsNeedASession(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ws := env.MustWorkspace(t, "tok")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	rcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	id, _ := MustChannel(t, env, admin, map[string]any{"name": "c", "config": map[string]any{"webhook_url": rcv.URL}})
	integ := env.Do(t, http.MethodPost, "/api/v1/tickets/integrations", admin, map[string]any{"name": "jira", "provider": "jira"})
	var in map[string]any
	integ.JSON(t, &in)
	create := map[string]any{"name": "x", "config": map[string]any{"webhook_url": rcv.URL}}
	ops := []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, "/api/v1/notification-channels", create},
		{http.MethodGet, "/api/v1/notification-channels", nil},
		{http.MethodGet, "/api/v1/notification-channels/" + id, nil},
		{http.MethodPatch, "/api/v1/notification-channels/" + id, map[string]any{"name": "y"}},
		{http.MethodDelete, "/api/v1/notification-channels/" + id, nil},
		{http.MethodPost, "/api/v1/notification-channels/" + id + "/rotate-secret", nil},
		{http.MethodPost, "/api/v1/notification-channels/" + id + "/test", nil},
		{http.MethodGet, "/api/v1/notification-channels/" + id + "/preview?days=30", nil},
		{http.MethodGet, "/api/v1/notification-channels/" + id + "/deliveries", nil},
		{http.MethodPut, "/api/v1/notification-channels/tickets/" + in["id"].(string) + "/sync", map[string]any{"interval_min": 30}},
	}
	tok := env.MustToken(t, ws)
	viewer := env.MustSession(t, ws, vigia.RoleViewer)
	for _, op := range ops {
		t.Run(op.method+" "+op.path, func(t *testing.T) {
			b := op.body
			r := env.Do(t, op.method, op.path, tok, b)
			if e := decodeError(t, r); r.Status != http.StatusForbidden || e.Code != "token_read_only" {
				t.Fatalf("token: %d %s", r.Status, r.Body)
			}
			r = env.Do(t, op.method, op.path, viewer, b)
			if e := decodeError(t, r); r.Status != http.StatusForbidden || e.Code != "forbidden" {
				t.Fatalf("viewer: %d %s", r.Status, r.Body)
			}
		})
	}
	if len(rcv.requests()) != 0 {
		t.Fatal("a refused caller made a delivery")
	}
	var c map[string]any
	if r := env.Do(t, http.MethodGet, "/api/v1/notification-channels/"+id, admin, nil); r.Status != 200 {
		t.Fatalf("the channel changed: %d", r.Status)
	} else {
		r.JSON(t, &c)
	}
	if c["name"] != "c" {
		t.Fatalf("channel %v", c)
	}
}

// A delivery that could not start within its window (the workers were down for hours)
// is skipped rather than sent late, and the channel shows it.
func TestStaleDeliveryIsSkipped(t *testing.T) {
	env := apptest.MustStart(t, webhookConfig(t))
	ws := env.MustWorkspace(t, "stale")
	admin := env.MustSession(t, ws, vigia.RoleAdmin)
	rcv := MustReceiver(t, receiverHost, status(http.StatusNoContent))
	id, _ := MustChannel(t, env, admin, map[string]any{"name": "late", "config": map[string]any{"webhook_url": rcv.URL},
		"event_kinds": []string{"dataset.verdict_changed"}})
	verdictEvent(t, env, ws)
	if _, err := env.App.Notify.Dispatch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := env.DB.Pool().Exec(context.Background(), `UPDATE webhook_deliveries SET created_at = now() - interval '7 hours',
		next_attempt_at = now() - interval '7 hours' WHERE channel_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	MustRunWorkers(t, env)
	eventually(t, "the delivery to be skipped", func() bool { _, st, _ := deliveryOf(t, env, id); return st == "skipped" })
	var ch map[string]any
	env.Do(t, http.MethodGet, "/api/v1/notification-channels/"+id, admin, nil).JSON(t, &ch)
	if len(rcv.requests()) != 0 || ch["last_delivery_status"] != "skipped" || ch["last_delivery_error"] != "expired" {
		t.Fatalf("%d sends, channel %v", len(rcv.requests()), ch)
	}
}
