package guard

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// noneParsed is a parsed-query cache that holds nothing: every document goes through the limits.
type noneParsed struct{}

func (noneParsed) contains(string) bool { return false }

// FuzzGraphQLRequest sends arbitrary request bodies and query strings (the operation, its variables and
// extensions as a client writes them) through the transport's reading and the document limits, before gqlgen
// sees them: no panic; a refusal is a *RequestError with a rule, a public code, a message and a 4xx status, or a
// parse error; an accepted POST body is a JSON object within the list limits; a document the limits accept has
// at most MaxTokens tokens.
func FuzzGraphQLRequest(f *testing.F) {
	for _, s := range []string{
		`{"query":"query($ns: String!) { lineage(start: {dataset: {namespace: $ns, name: \"a\"}}, depth: 3) { nodes { __typename } } }","variables":{"ns":"s3://b"}}`,
		`{"query":"{ a { ...F } } fragment F on Q { a { ...F } }"}`,
		`{"query":"query { search(text: \"x\", first: 99999999999999999999) { total } }","variables":{"a":[1,[2,[3]]]}}`,
		`{"query":"","extensions":{"persistedQuery":{"version":1,"sha256Hash":"00"}}}`,
		`[{"query":"{a}"}]`, `{"query":123}`, `{"variables":{"x":{"y":{"z":"` + "\xff" + `"}}}}`,
	} {
		f.Add([]byte(s), "query=%7Ba%7D&variables=%7B%22x%22%3A1%7D")
	}
	lim := Limits{MaxBodyBytes: 1 << 16, MaxListItems: 100, MaxTokens: 2000}.WithDefaults()
	tr := transport{lim: lim}
	doc := documentLimits{lim: lim, parsed: noneParsed{}}
	f.Fuzz(func(t *testing.T, body []byte, query string) {
		post := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		post.Header.Set("Content-Type", "application/json")
		get := httptest.NewRequest(http.MethodGet, "/graphql", nil)
		get.URL.RawQuery = query
		for _, r := range []*http.Request{post, get} {
			p, rerr := tr.params(r)
			if rerr != nil {
				if rerr.rule == "" || rerr.code == "" || rerr.msg == "" || (rerr.status != 0 && rerr.status/100 != 4) {
					t.Fatalf("incomplete refusal %+v", rerr)
				}
				continue
			}
			if r.Method == http.MethodPost && checkJSON(body, lim.MaxListItems, true) != nil {
				t.Fatalf("accepted a body the list limits refuse: %q", body)
			}
			if r.Method == http.MethodGet {
				if _, err := url.ParseQuery(query); err != nil {
					t.Fatalf("accepted a query string that is not URL-encoded: %q", query)
				}
			}
			if gerr := doc.MutateOperationParameters(context.Background(), p); gerr != nil {
				var re *RequestError
				if errors.As(gerr, &re) && (re.rule == "" || re.code == "") {
					t.Fatalf("incomplete document refusal %+v", re)
				}
				if gerr.Message == "" {
					t.Fatalf("refusal without a message: %#v", gerr)
				}
				continue
			}
			if p.Query != "" && tooManyTokens(&ast.Source{Input: p.Query}, lim.MaxTokens) {
				t.Fatalf("accepted a document over %d tokens", lim.MaxTokens)
			}
		}
	})
}
