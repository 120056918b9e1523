package guard

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// depthLimit refuses operations nested deeper than max (introspection fields are not counted).
type depthLimit struct{ max int }

var (
	_ graphql.HandlerExtension        = depthLimit{}
	_ graphql.OperationContextMutator = depthLimit{}
)

func (depthLimit) ExtensionName() string                   { return "DepthLimit" }
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (d depthLimit) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	if depth := selectionDepth(oc.Operation.SelectionSet, oc.Doc.Fragments, 0); depth > d.max {
		err := gqlerror.Errorf("operation has depth %d, which exceeds the limit of %d", depth, d.max)
		err.Extensions = map[string]any{"code": CodeComplexity}
		return err
	}
	return nil
}

func selectionDepth(set ast.SelectionSet, frags ast.FragmentDefinitionList, seen int) int {
	if seen > 64 { // fragment cycles are rejected by validation; never recurse without bound
		return seen
	}
	deepest := 0
	for _, s := range set {
		var d int
		switch v := s.(type) {
		case *ast.Field:
			if strings.HasPrefix(v.Name, "__") {
				continue
			}
			d = 1 + selectionDepth(v.SelectionSet, frags, seen+1)
		case *ast.InlineFragment:
			d = selectionDepth(v.SelectionSet, frags, seen+1)
		case *ast.FragmentSpread:
			if f := frags.ForName(v.Name); f != nil {
				d = selectionDepth(f.SelectionSet, frags, seen+1)
			}
		}
		deepest = max(deepest, d)
	}
	return deepest
}
