package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/internal/httpbody"
)

// RequestError is a request refused before any work because the caller must change it; the error presenter
// gives it its code and message, the transport its HTTP status, the refusal metric its rule.
type RequestError struct {
	rule       refusalRule
	status     int
	code       string
	msg        string
	retryAfter time.Duration // > 0: sent as Retry-After
}

func (e *RequestError) Error() string { return e.msg }

// Code is the public error code (extensions.code) of the refusal.
func (e *RequestError) Code() string { return e.code }

func badRequest(rule refusalRule, format string, args ...any) *RequestError {
	return &RequestError{rule: rule, status: http.StatusBadRequest, code: CodeBadRequest, msg: fmt.Sprintf(format, args...)}
}

// refusalRule names the limit or rule a request was refused by (the label of headwater_graphql_refused_total).
type refusalRule string

// The refusal rules.
const (
	ruleBodyBytes      refusalRule = "max-body-bytes"
	ruleBodyRead       refusalRule = "body-read"
	ruleJSON           refusalRule = "json"
	ruleBatch          refusalRule = "batch"
	ruleListItems      refusalRule = "max-list-items"
	ruleConcurrent     refusalRule = "max-concurrent"
	ruleCost           refusalRule = "cost-per-second"
	ruleServerBusy     refusalRule = "max-in-flight"
	ruleTokens         refusalRule = "max-tokens"
	ruleFragments      refusalRule = "max-fragments"
	ruleSpreads        refusalRule = "max-spreads"
	ruleFields         refusalRule = "max-fields"
	ruleFieldRepeats   refusalRule = "max-field-repeats"
	ruleNesting        refusalRule = "max-nesting"
	rulePersistedQuery refusalRule = "persisted-query"
	ruleGETMutation    refusalRule = "get-mutation"
	ruleTransport      refusalRule = "transport"
)

func (e *RequestError) gqlError() *gqlerror.Error { return &gqlerror.Error{Message: e.msg, Err: e} }

// transport serves GET and POST (application/json) /graphql, one operation per request, within the limits:
// the per-principal concurrency slot is taken first, then one of the process's in-flight slots, then the body or query string is read up to its limit, its
// JSON lists are bounded, and only then does gqlgen see it. It replaces gqlgen's GET and POST transports, which
// read bodies without a bound and echo undecodable ones back.
type transport struct {
	lim       Limits
	gate      *principalGate
	admission *admission
	metrics   *graphqlMetrics
}

var _ graphql.Transport = transport{}

func (transport) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" {
		return false
	}
	if r.Method == http.MethodGet {
		return true
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && r.Method == http.MethodPost && mediaType == "application/json"
}

func (t transport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	w.Header().Set("Content-Type", "application/json")
	release, ok := t.gate.enter(authz.FromContext(r.Context()))
	if !ok {
		t.refuse(w, r, exec, &RequestError{rule: ruleConcurrent, status: http.StatusTooManyRequests, code: CodeRateLimited, retryAfter: time.Second,
			msg: fmt.Sprintf("too many concurrent GraphQL requests for this principal (limit %d), retry later", t.lim.MaxConcurrent)})
		return
	}
	defer release()
	admitted, ok := t.admission.enter(r.Context())
	if !ok {
		t.refuse(w, r, exec, &RequestError{rule: ruleServerBusy, status: http.StatusServiceUnavailable, code: CodeUnavailable, retryAfter: time.Second,
			msg: fmt.Sprintf("the server is running its limit of %d GraphQL requests; retry in 1 s", t.lim.MaxInFlight)})
		return
	}
	defer admitted()
	start := graphql.Now()
	params, rerr := t.params(r)
	if rerr != nil {
		t.refuse(w, r, exec, rerr)
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	t.execute(w, r, exec, params)
}

// params reads the request's operation.
func (t transport) params(r *http.Request) (*graphql.RawParams, *RequestError) {
	if r.Method == http.MethodGet {
		return t.getParams(r)
	}
	body, rerr := readBody(r, t.lim.MaxBodyBytes)
	if rerr != nil {
		return nil, rerr
	}
	if rerr := checkJSON(body, t.lim.MaxListItems, true); rerr != nil {
		return nil, rerr
	}
	p := &graphql.RawParams{Headers: r.Header}
	if err := decodeJSON(body, p); err != nil {
		return nil, badRequest(ruleJSON, "request body is not a GraphQL request object: %s", jsonProblem(err))
	}
	return p, nil
}

func (t transport) getParams(r *http.Request) (*graphql.RawParams, *RequestError) {
	if n := int64(len(r.URL.RawQuery)); n > t.lim.MaxBodyBytes {
		return nil, &RequestError{rule: ruleBodyBytes, status: http.StatusRequestURITooLong, code: CodeBadRequest,
			msg: fmt.Sprintf("query string of %d bytes exceeds the limit of %d bytes; send large operations by POST", n, t.lim.MaxBodyBytes)}
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest(ruleJSON, "query string is not URL-encoded: %s", err.Error())
	}
	p := &graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName"), Headers: r.Header}
	for name, into := range map[string]any{"variables": &p.Variables, "extensions": &p.Extensions} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		if rerr := checkJSON([]byte(v), t.lim.MaxListItems, false); rerr != nil {
			return nil, rerr
		}
		if err := decodeJSON([]byte(v), into); err != nil {
			return nil, badRequest(ruleJSON, "%s: not a JSON object: %s", name, jsonProblem(err))
		}
	}
	return p, nil
}

// readBody reads at most limit bytes of the body; a longer body is refused with 413 without reading the rest
// (the connection is closed rather than drained).
func readBody(r *http.Request, limit int64) ([]byte, *RequestError) {
	tooLarge := func() *RequestError {
		return &RequestError{rule: ruleBodyBytes, status: http.StatusRequestEntityTooLarge, code: CodeBadRequest,
			msg: fmt.Sprintf("request body exceeds the limit of %d bytes", limit)}
	}
	if r.ContentLength > limit {
		return nil, tooLarge()
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, badRequest(ruleBodyRead, "request body could not be read")
	}
	if int64(len(body)) > limit {
		return nil, tooLarge()
	}
	return body, nil
}

func decodeJSON(b []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(into)
}

// jsonProblem describes a decoding error without quoting the input.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s must not be a JSON %s", fieldOrBody(typ.Field), typ.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of JSON"
	}
	return "invalid JSON"
}

func fieldOrBody(f string) string {
	if f == "" {
		return "the request"
	}
	return strconv.Quote(f)
}

// execute runs one operation through gqlgen; every error goes through the error presenter.
func (t transport) execute(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, params *graphql.RawParams) {
	ctx := r.Context()
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		t.metrics.refusedBy(errs)
		writeStatus(w, errs)
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs))
		return
	}
	if r.Method == http.MethodGet && opCtx.Operation.Operation != ast.Query {
		w.WriteHeader(http.StatusMethodNotAllowed)
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, opCtx),
			gqlerror.List{badRequest(ruleGETMutation, "GET serves queries only; send a %s by POST", opCtx.Operation.Operation).gqlError()}))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	writeResponse(w, responses(ctx))
}

// refuse answers a request refused before gqlgen saw it.
func (t transport) refuse(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, e *RequestError) {
	t.metrics.refused(e.rule)
	writeRefusalStatus(w, e)
	writeResponse(w, exec.DispatchError(r.Context(), gqlerror.List{e.gqlError()}))
}

// writeStatus writes the HTTP status of an operation refused before execution: a refusal's own (with its
// Retry-After), else gqlgen's (422 for a document that does not parse or validate, 200 otherwise).
func writeStatus(w http.ResponseWriter, errs gqlerror.List) {
	for _, e := range errs {
		if re, ok := errors.AsType[*RequestError](e); ok {
			writeRefusalStatus(w, re)
			return
		}
	}
	if errcode.GetErrorKind(errs) == errcode.KindProtocol {
		w.WriteHeader(http.StatusUnprocessableEntity)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// leavesBodyUnread reports whether the request was refused before its body was read in full: an oversized body,
// or a request over a concurrency limit. Its connection closes after the answer (httpbody.LeaveUnread).
func (e *RequestError) leavesBodyUnread() bool {
	return e.status == http.StatusRequestEntityTooLarge || e.rule == ruleConcurrent || e.rule == ruleServerBusy
}

func writeRefusalStatus(w http.ResponseWriter, e *RequestError) {
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(e.retryAfter)))
	}
	if e.leavesBodyUnread() {
		httpbody.LeaveUnread(w)
	}
	w.WriteHeader(e.status)
}

func writeResponse(w io.Writer, resp *graphql.Response) {
	b, err := json.Marshal(resp)
	if err != nil {
		b = []byte(`{"errors":[{"message":"` + InternalMessage + `","extensions":{"code":"` + CodeInternal + `"}}]}`)
	}
	_, _ = w.Write(b)
}

// checkJSON refuses, in one pass over the bytes and before decoding, a batched request (a JSON array where one
// request object is expected) and any JSON list longer than maxItems.
func checkJSON(b []byte, maxItems int, body bool) *RequestError {
	if body {
		if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '[' {
			return badRequest(ruleBatch, "batched requests (a JSON array of operations) are not supported: send one operation per request")
		}
	}
	var items []int // per open bracket: items so far (-1 for an object)
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[':
			items = append(items, 1)
		case '{':
			items = append(items, -1)
		case ']', '}':
			if len(items) > 0 {
				items = items[:len(items)-1]
			}
		case ',':
			if n := len(items); n > 0 && items[n-1] > 0 {
				items[n-1]++
				if items[n-1] > maxItems {
					return badRequest(ruleListItems, "a JSON list in the request (variables or extensions) has more than the limit of %d items", maxItems)
				}
			}
		}
	}
	return nil
}

// unsupported answers every request the transport does not serve (another method or content type, an
// upgrade), through the error presenter; it is added last.
type unsupported struct{ metrics *graphqlMetrics }

var _ graphql.Transport = unsupported{}

func (unsupported) Supports(*http.Request) bool { return true }

func (u unsupported) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	w.Header().Set("Content-Type", "application/json")
	transport{metrics: u.metrics}.refuse(w, r, exec, &RequestError{rule: ruleTransport, status: http.StatusUnsupportedMediaType,
		code: CodeBadRequest, msg: "send GraphQL requests as POST with Content-Type application/json, or as GET"})
}
