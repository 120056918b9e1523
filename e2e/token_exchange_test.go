package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/google/uuid"

	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/internal/testenv"
)

// exchangeToken posts an RFC 8693 token exchange and returns the status and the answer.
func exchangeToken(t *testing.T, api, subjectToken, scope, lifetime string) (int, map[string]any) {
	t.Helper()
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {subjectToken},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "scope": {scope}}
	if lifetime != "" {
		form.Set("lifetime", lifetime)
	}
	resp, err := http.PostForm("http://"+api+"/api/v1/token/exchange", form)
	return answerOf(t, resp, err)
}

// Issue 18, credential vending for Headwater's own producers (docs/adr/0051-token-exchange.md): producer A, whose
// long-lived token may PRODUCE in <run>-a and s3://<run>-a, exchanges it for a run's token. The run's token writes
// where it was exchanged for; an event writing a namespace A may write but the run's token was not exchanged for
// is refused (403 naming the field and rule), quarantined and not projected; it reads nothing and mints nothing
// (403); it expires; it cannot be exchanged again; A cannot exchange for a namespace it holds no PRODUCE on; and
// every exchange, granted or refused, is in the audit stream.
func TestExchangedTokensProduceOnlyWhereTheyWereExchangedFor(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	jobNS, outNS := runID+"-a", "s3://"+runID+"-a"
	event := func(out string) []byte {
		return fmt.Appendf(nil, `{"eventType":"COMPLETE","eventTime":%q,"producer":"https://example.com/e2e","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent","run":{"runId":%q},"job":{"namespace":%q,"name":"job"},"inputs":[],"outputs":[{"namespace":%q,"name":"out-%s"}]}`,
			time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano), uuid.NewString(), jobNS, out, testenv.Token(3))
	}
	send := func(path string, body []byte, tok string) (int, map[string]any) {
		t.Helper()
		return postTo(t, api, path, tok, body)
	}

	// 1. Exchanged for both namespaces: it writes.
	code, ans := exchangeToken(t, api, tokenA, "produce:"+jobNS+" produce:"+outNS, "")
	if code != 200 || ans["token_type"] != "Bearer" || ans["expires_in"] != float64(3600) ||
		ans["issued_token_type"] != "urn:ietf:params:oauth:token-type:access_token" || ans["scope"] != "produce:"+jobNS+" produce:"+outNS {
		t.Fatalf("exchange: %d %v", code, ans)
	}
	both := ans["access_token"].(string)
	code, body := send("/api/v1/lineage", event(outNS), both)
	if code != http.StatusAccepted {
		t.Fatalf("the run's token inside its namespaces: %d %v", code, body)
	}
	waitEvents(t, store, []string{body["eventId"].(string)}, projectTimeout)

	// 2. Exchanged for the job's namespace only: writing the output namespace (which A itself may) is refused,
	// quarantined and not projected.
	code, ans = exchangeToken(t, api, tokenA, "produce:"+jobNS, "5")
	if code != 200 {
		t.Fatalf("exchange for the job's namespace: %d %v", code, ans)
	}
	jobOnly := ans["access_token"].(string)
	code, body = send("/api/v1/lineage", event(outNS), jobOnly)
	if code != http.StatusForbidden {
		t.Fatalf("the run's token outside what it was exchanged for: %d %v, want 403", code, body)
	}
	if e := body["error"].(map[string]any); e["field"] != "outputs[0].namespace" || e["rule"] != "produce-permission" {
		t.Fatalf("the refusal must name the field and rule: %v", e)
	}
	denied := body["eventId"].(string)
	if reason := waitQuarantined(t, store, denied); reason == "" {
		t.Fatal("the refused event was quarantined without a reason")
	}
	if n := countProjected(t, []string{denied}); n != 0 {
		t.Fatal("a refused event was projected")
	}

	// 3. It reads nothing and mints nothing.
	for _, path := range []string{"/graphql", "/api/v1/declare/dbt/x"} {
		code, body = send(path, []byte(`{"query":"{ __typename }"}`), both)
		if code != http.StatusForbidden || !strings.Contains(fmt.Sprint(body), "may only send lineage events") {
			t.Errorf("%s with the run's token: %d %v, want 403", path, code, body)
		}
	}

	// 4. It cannot be exchanged again; A cannot exchange for what it may not produce; an unknown credential is refused.
	if code, ans := exchangeToken(t, api, both, "produce:"+jobNS, ""); code != 400 || ans["error"] != "invalid_grant" {
		t.Errorf("re-exchange of a run's token: %d %v, want 400 invalid_grant", code, ans)
	}
	if code, ans := exchangeToken(t, api, tokenA, "produce:"+runID+"-b", ""); code != 400 || ans["error"] != "invalid_scope" ||
		!strings.Contains(ans["error_description"].(string), runID+"-b") {
		t.Errorf("exchange beyond A's grants: %d %v, want 400 invalid_scope naming the namespace", code, ans)
	}
	if code, ans := exchangeToken(t, api, "hw_0123456789abcdef_"+strings.Repeat("A", 43), "produce:"+jobNS, ""); code != 400 || ans["error"] != "invalid_grant" {
		t.Errorf("exchange of an unknown token: %d %v, want 400 invalid_grant", code, ans)
	}
	if code, ans := exchangeToken(t, api, tokenA, "write:"+jobNS, ""); code != 400 || ans["error"] != "invalid_scope" {
		t.Errorf("a scope entry without produce: %d %v", code, ans)
	}

	// 5. It expires (lifetime 5 s).
	time.Sleep(6 * time.Second)
	if code, _ := send("/api/v1/lineage", event(jobNS), jobOnly); code != http.StatusUnauthorized {
		t.Errorf("an expired run's token: %d, want 401", code)
	}

	// 6. Every exchange that named a principal is audited: two granted, two refused (the re-exchange and the one
	// beyond A's grants; the unknown token has no principal, the malformed scope never reached one).
	granted, refused := 0, 0
	for _, v := range wholeTopic(t, kc, kc.EventsTopic+".audit") {
		var r struct{ Principal, Operation, Decision string }
		if json.Unmarshal(v, &r) == nil && r.Operation == "exchangeToken" && r.Principal == runID+"-producer-a" {
			if r.Decision == "ALLOW" {
				granted++
			} else {
				refused++
			}
		}
	}
	if granted != 2 || refused != 2 {
		t.Errorf("audited exchanges: %d granted, %d refused; want 2 and 2", granted, refused)
	}
}

// wholeTopic reads every message a topic holds now (each partition up to its high-water mark).
func wholeTopic(t *testing.T, kc kafkaio.Config, topic string) [][]byte {
	t.Helper()
	client, err := sarama.NewClient(kc.Brokers, kc.NewSaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	cons, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	parts, err := client.Partitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, p := range parts {
		hwm, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		if hwm == 0 {
			continue
		}
		pc, err := cons.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		for m := range pc.Messages() {
			out = append(out, m.Value)
			if m.Offset >= hwm-1 {
				break
			}
		}
		_ = pc.Close()
	}
	return out
}
