package guard

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
)

// documentLimits refuses a document whose validation or complexity computation would cost more than the limits
// allow, before gqlgen validates it. It runs after APQ (it sees the query APQ resolved) and parses once, within
// the token limit; a document already in the parsed-query cache passed it before and is not parsed again.
//
// Validation and complexity both walk the document with fragments expanded, and the overlapping-fields rule
// compares every pair of selections that merge into one response field; so the limits are on the expanded
// document: fields (a fragment bomb, each fragment spreading the next twice, expands to 2^n), selections per
// response field (20,000 `__typename`), nesting, and the written fragments and spreads.
type documentLimits struct {
	lim    Limits
	parsed interface{ contains(query string) bool } // the parsed-query cache
}

var (
	_ graphql.HandlerExtension          = documentLimits{}
	_ graphql.OperationParameterMutator = documentLimits{}
)

func (documentLimits) ExtensionName() string                   { return "DocumentLimits" }
func (documentLimits) Validate(graphql.ExecutableSchema) error { return nil }

func (d documentLimits) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	if p.Query == "" {
		return nil // gqlgen answers "no operation provided"
	}
	if d.parsed.contains(p.Query) {
		return nil
	}
	src := &ast.Source{Input: p.Query}
	if tooManyTokens(src, d.lim.MaxTokens) {
		return badRequest(ruleTokens, "document has more than the limit of %d tokens", d.lim.MaxTokens).gqlError()
	}
	doc, err := parser.ParseQueryWithTokenLimit(src, d.lim.MaxTokens)
	if err != nil {
		var gqlErr *gqlerror.Error
		if !errors.As(err, &gqlErr) {
			gqlErr = gqlerror.Wrap(err)
		}
		errcode.Set(gqlErr, errcode.ParseFailed) // the presenter answers BAD_REQUEST, as for gqlgen's own parse
		return gqlErr
	}
	if re := checkDocument(doc, d.lim); re != nil {
		return re.gqlError()
	}
	return nil
}

// tooManyTokens lexes at most limit+1 tokens (comments included, as the parser counts them); a lexical error
// stops the count and is left to the parser to report.
func tooManyTokens(src *ast.Source, limit int) bool {
	lex := lexer.New(src)
	for n := 0; n <= limit; n++ {
		tok, err := lex.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			return false
		}
	}
	return true
}

// checkDocument applies the written and the expanded limits; nil when the document is within them.
func checkDocument(doc *ast.QueryDocument, lim Limits) *RequestError {
	if n := len(doc.Fragments); n > lim.MaxFragments {
		return badRequest(ruleFragments, "document has %d fragment definitions, the limit is %d", n, lim.MaxFragments)
	}
	w := newDocWalker(doc, lim)
	if n := w.writtenSpreads(); n > lim.MaxSpreads {
		return badRequest(ruleSpreads, "document has %d fragment spreads, the limit is %d", n, lim.MaxSpreads)
	}
	if n := w.expandedFields(); n > lim.MaxFields {
		return badRequest(ruleFields, "document selects more than the limit of %d fields with its fragments expanded", lim.MaxFields)
	}
	return w.mergedFields()
}

// docWalker walks a document with its fragments expanded. Expanded counts are memoised per fragment and
// saturate at the limit, so a fragment bomb costs time linear in what is written; a fragment cycle counts as
// nothing here (validation refuses cycles).
type docWalker struct {
	lim      Limits
	doc      *ast.QueryDocument
	frags    map[string]*ast.FragmentDefinition
	fields   map[string]int // expanded field count per fragment; -1 while being counted
	paths    map[mergeKey]int
	counts   []int
	onStack  map[string]bool
	refusal  *RequestError
	nextPath int
}

// mergeKey is one response field: the selections with the same response name under the same parent path merge.
type mergeKey struct {
	parent int
	name   string
}

func newDocWalker(doc *ast.QueryDocument, lim Limits) *docWalker {
	w := &docWalker{lim: lim, doc: doc, frags: make(map[string]*ast.FragmentDefinition, len(doc.Fragments)),
		fields: map[string]int{}, onStack: map[string]bool{}}
	for _, f := range doc.Fragments {
		w.frags[f.Name] = f
	}
	return w
}

// writtenSpreads counts the fragment spreads as written.
func (w *docWalker) writtenSpreads() int {
	n := 0
	var count func(ast.SelectionSet)
	count = func(set ast.SelectionSet) {
		for _, s := range set {
			switch v := s.(type) {
			case *ast.Field:
				count(v.SelectionSet)
			case *ast.InlineFragment:
				count(v.SelectionSet)
			case *ast.FragmentSpread:
				n++
			}
		}
	}
	for _, op := range w.doc.Operations {
		count(op.SelectionSet)
	}
	for _, f := range w.doc.Fragments {
		count(f.SelectionSet)
	}
	return n
}

// expandedFields counts the field selections of every operation and fragment definition with spreads expanded,
// saturating just above the limit.
func (w *docWalker) expandedFields() int {
	total := 0
	for _, op := range w.doc.Operations {
		total = w.add(total, w.setFields(op.SelectionSet))
	}
	for _, f := range w.doc.Fragments {
		total = w.add(total, w.fragmentFields(f.Name))
	}
	return total
}

func (w *docWalker) add(a, b int) int { return min(a+b, w.lim.MaxFields+1) }

func (w *docWalker) setFields(set ast.SelectionSet) int {
	n := 0
	for _, s := range set {
		switch v := s.(type) {
		case *ast.Field:
			n = w.add(n, w.add(1, w.setFields(v.SelectionSet)))
		case *ast.InlineFragment:
			n = w.add(n, w.setFields(v.SelectionSet))
		case *ast.FragmentSpread:
			n = w.add(n, w.fragmentFields(v.Name))
		}
	}
	return n
}

func (w *docWalker) fragmentFields(name string) int {
	if n, ok := w.fields[name]; ok {
		return max(n, 0) // -1: a cycle
	}
	f := w.frags[name]
	if f == nil {
		return 0 // unknown fragment: validation refuses it
	}
	w.fields[name] = -1
	n := w.setFields(f.SelectionSet)
	w.fields[name] = n
	return n
}

// mergedFields walks the expanded document (its size is bounded by expandedFields) and refuses a response field
// that too many selections merge into, or nesting beyond the limit. Each operation and fragment definition is
// its own root, as validation treats them.
func (w *docWalker) mergedFields() *RequestError {
	w.paths = map[mergeKey]int{}
	w.counts = []int{0}
	w.nextPath = 1
	for _, op := range w.doc.Operations {
		w.walk(op.SelectionSet, w.root(), 1)
	}
	for _, f := range w.doc.Fragments {
		w.onStack[f.Name] = true
		w.walk(f.SelectionSet, w.root(), 1)
		delete(w.onStack, f.Name)
	}
	return w.refusal
}

func (w *docWalker) root() int {
	id := w.nextPath
	w.nextPath++
	w.counts = append(w.counts, 0)
	return id
}

func (w *docWalker) walk(set ast.SelectionSet, parent, depth int) {
	if w.refusal != nil || len(set) == 0 {
		return
	}
	if depth > w.lim.MaxNesting {
		w.refusal = badRequest(ruleNesting, "selections nest deeper than the limit of %d levels with fragments expanded", w.lim.MaxNesting)
		return
	}
	for _, s := range set {
		switch v := s.(type) {
		case *ast.Field:
			w.walk(v.SelectionSet, w.merge(parent, v), depth+1)
		case *ast.InlineFragment:
			w.walk(v.SelectionSet, parent, depth)
		case *ast.FragmentSpread:
			if f := w.frags[v.Name]; f != nil && !w.onStack[v.Name] {
				w.onStack[v.Name] = true
				w.walk(f.SelectionSet, parent, depth)
				delete(w.onStack, v.Name)
			}
		}
	}
}

// merge records one more selection of the response field and returns the field's path id.
func (w *docWalker) merge(parent int, f *ast.Field) int {
	name := f.Alias
	if name == "" {
		name = f.Name
	}
	k := mergeKey{parent: parent, name: name}
	id, ok := w.paths[k]
	if !ok {
		id = w.root()
		w.paths[k] = id
	}
	w.counts[id]++
	if w.counts[id] > w.lim.MaxFieldRepeats && w.refusal == nil {
		w.refusal = badRequest(ruleFieldRepeats, "field %q is selected more than %d times in one selection set (fragments expanded)", name, w.lim.MaxFieldRepeats)
	}
	return id
}
