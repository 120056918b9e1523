package gateway

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/olevent/jsontree"
	"github.com/headwater-data/headwater/internal/rules"
)

// Rules only the gateway answers (the per-event rules are olevent's and identcheck's; rules other packages act on
// too, such as rules.MaxBytes, are in internal/rules).
const (
	ruleContentEncoding = "content-encoding" // 415: a Content-Encoding other than identity or gzip
	ruleJSONArray       = "json-array"       // the batch body is valid JSON but not an array
	ruleGzip            = "gzip"             // Content-Encoding gzip but not a gzip body
	ruleRead            = "read"             // the body could not be read
	ruleMaxBatchEvents  = "max-batch-events" // a batch longer than the configured maximum
	ruleUnavailable     = "unavailable"      // 503: Kafka did not take the events
	ruleRateLimit       = "rate-limit"       // 429
	ruleOverloaded      = "overloaded"       // 503: no room in the in-flight byte budget
)

// wholeStatus is the HTTP status of a request refused as a whole.
func wholeStatus(rule string) int {
	switch rule {
	case rules.MaxBytes:
		return http.StatusRequestEntityTooLarge
	case ruleContentEncoding:
		return http.StatusUnsupportedMediaType
	}
	return http.StatusBadRequest
}

// contentEncoding says whether the body is gzip; anything but identity or a single gzip is refused (415), never
// read as JSON: a br or deflate body would otherwise be answered as if the producer had sent malformed JSON.
func contentEncoding(values []string) (gzip bool, rej *ErrorBody) {
	var codings []string
	for _, v := range values {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	switch {
	case len(codings) == 0:
		return false, nil
	case len(codings) == 1 && (codings[0] == "gzip" || codings[0] == "x-gzip"):
		return true, nil
	}
	return false, &ErrorBody{Field: "Content-Encoding", Rule: ruleContentEncoding,
		Message: "Content-Encoding " + strings.Join(codings, ", ") + " is not supported; send identity or gzip"}
}

// splitBatch checks that the batch body is one valid JSON array and splits it into its items, in one pass that
// checks the syntax as encoding/json.Valid does (jsontree.Split, ADR 0037): a body that is not JSON is refused
// whole, not item by item. The items are spans of body, each decoded on its own.
func splitBatch(body []byte) ([][]byte, *ErrorBody) {
	items, isArray, ok := jsontree.Split(body, olevent.MaxSyntaxDepth)
	if !ok {
		if decode.TooDeep(body, olevent.MaxSyntaxDepth) {
			return nil, &ErrorBody{Field: "body", Rule: olevent.RuleMaxDepth,
				Message: "the batch nests deeper than any event may"}
		}
		return nil, &ErrorBody{Field: "body", Rule: olevent.RuleJSON, Message: "the batch body is not valid JSON: " + syntaxError(body)}
	}
	if !isArray {
		return nil, &ErrorBody{Field: "body", Rule: ruleJSONArray, Message: "batch body must be a JSON array of OpenLineage events"}
	}
	return items, nil
}

// syntaxError names the first syntax error of an invalid body (the slow path, only for refusals).
func syntaxError(body []byte) string {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err.Error()
	}
	return "invalid"
}
