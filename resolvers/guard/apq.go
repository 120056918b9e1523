package guard

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// persistedQueries is gqlgen's automatic persisted queries with its refusals classified: a hash that does not
// match the query, or persisted-query data that is malformed or of another version, is the caller's to fix
// (BAD_REQUEST); an unknown hash keeps PERSISTED_QUERY_NOT_FOUND, which APQ clients act on by sending the query.
type persistedQueries struct {
	extension.AutomaticPersistedQuery
}

var _ graphql.OperationParameterMutator = persistedQueries{}

func (p persistedQueries) MutateOperationParameters(ctx context.Context, raw *graphql.RawParams) *gqlerror.Error {
	err := p.AutomaticPersistedQuery.MutateOperationParameters(ctx, raw)
	if err == nil || err.Extensions["code"] != nil {
		return err
	}
	return badRequest(rulePersistedQuery, "extensions.persistedQuery: %s", err.Message).gqlError()
}
