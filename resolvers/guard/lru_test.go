package guard

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// TestCachesAreBoundedInBytes: issue 13 item 4. The parsed-query and APQ caches hold at most their byte budget
// whatever the documents' sizes, and never keep a document longer than maxCachedDocumentBytes.
func TestCachesAreBoundedInBytes(t *testing.T) {
	ctx := context.Background()
	const budget = 1 << 20
	docs, apq := newQueryCache(budget, nil), newAPQCache(budget, nil)
	doc := &ast.QueryDocument{}
	for i := range 1000 {
		q := fmt.Sprintf("query Q%d { __typename }", i) + strings.Repeat(" ", 8<<10)
		docs.Add(ctx, q, doc)
		apq.Add(ctx, fmt.Sprintf("%064d", i), q)
	}
	for name, c := range map[string]interface{ size() (int, int64) }{"query cache": docs, "apq cache": apq} {
		if n, b := c.size(); b > budget || n == 0 {
			t.Errorf("%s: %d entries, %d bytes; budget %d", name, n, b, budget)
		}
	}
	large := "{ __typename }" + strings.Repeat(" ", maxCachedDocumentBytes)
	docs.Add(ctx, large, doc)
	apq.Add(ctx, "large", large)
	if _, ok := docs.Get(ctx, large); ok {
		t.Error("query cache kept a document over maxCachedDocumentBytes")
	}
	if _, ok := apq.Get(ctx, "large"); ok {
		t.Error("apq cache kept a query over maxCachedDocumentBytes")
	}
	small := "{ __typename }"
	docs.Add(ctx, small, doc)
	if got, ok := docs.Get(ctx, small); !ok || got != doc {
		t.Error("query cache lost the most recent small document")
	}
}
