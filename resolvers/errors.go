package resolvers

import (
	"context"
	"errors"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vikstrous/dataloadgen"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authn"
	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/inventory/manage"
	"github.com/headwater-data/headwater/resolvers/guard"
	"github.com/headwater-data/headwater/resolvers/model"
	"github.com/headwater-data/headwater/trust"
)

func isNotFound(err error) bool {
	return errors.Is(err, api.ErrNotFound) || errors.Is(err, dataloadgen.ErrNotFound)
}

// presentError is the only place a Go error becomes a client error: a typed domain error keeps its public
// message and gets its code; anything else is INTERNAL with a fixed message, and is logged.
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		var de *api.Error
		var re *guard.RequestError
		switch {
		case errors.As(err, &re): // refused by a request limit, the transport or APQ
			gqlErr.Message = re.Error()
			setCode(gqlErr, re.Code())
		case errors.Is(err, model.ErrInvalidInput) || errors.Is(err, apitoken.ErrBadRequest) || errors.Is(err, trust.ErrInvalid):
			gqlErr.Message = inputMessage(gqlErr, err)
			setCode(gqlErr, guard.CodeBadRequest)
		case errors.As(err, &de):
			gqlErr.Message = de.Message
			setCode(gqlErr, codeOf(de))
			if errors.Is(de.Class, api.ErrUnavailable) {
				log.Warn("store unavailable", "path", gqlErr.Path.String(), "err", err)
			}
		case isForbidden(err):
			gqlErr.Message = forbiddenMessage
			setCode(gqlErr, guard.CodeForbidden)
		case errors.Is(err, authz.ErrInvalid) || errors.Is(err, grant.ErrUnknownRole):
			gqlErr.Message = invalidMessage(err)
			setCode(gqlErr, guard.CodeBadRequest)
		case errors.Is(err, trust.ErrUnavailable) || errors.Is(err, manage.ErrUnavailable):
			log.Warn("trust store unavailable", "path", gqlErr.Path.String(), "err", err)
			gqlErr.Message = "the trust signals are unavailable, retry later"
			setCode(gqlErr, guard.CodeUnavailable)
		case errors.Is(err, authz.ErrUnavailable) || errors.Is(err, authn.ErrUnavailable):
			log.Warn("grant store unavailable", "path", gqlErr.Path.String(), "err", err)
			gqlErr.Message = "the permission store is unavailable, retry later"
			setCode(gqlErr, guard.CodeUnavailable)
		case isNotFound(err):
			gqlErr.Message = "not found"
			setCode(gqlErr, guard.CodeNotFound)
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
			gqlErr.Message = "the request was cancelled or timed out"
			setCode(gqlErr, guard.CodeUnavailable)
		default:
			if code, ok := gqlErr.Extensions["code"].(string); ok { // parse, validation, limits, APQ from gqlgen
				if code == errcode.ParseFailed || code == errcode.ValidationFailed {
					setCode(gqlErr, guard.CodeBadRequest)
				}
				return gqlErr
			}
			log.Error("resolver error", "path", gqlErr.Path.String(), "err", err)
			gqlErr.Message = guard.InternalMessage
			setCode(gqlErr, guard.CodeInternal)
		}
		return gqlErr
	}
}

// forbiddenMessage is the one message of refused operations: it never says what exists or which grant is missing.
const forbiddenMessage = "forbidden: the caller may not do this"

func isForbidden(err error) bool {
	return errors.Is(err, authz.ErrForbidden) || errors.Is(err, apitoken.ErrForbidden) ||
		errors.Is(err, apitoken.ErrNotFound)
}

// invalidMessage is the public text of a malformed management input: the model's validation message (it names
// only what the caller sent), or "unknown role" (only reached after the caller's MANAGE_GRANTS was checked).
func invalidMessage(err error) string {
	if errors.Is(err, grant.ErrUnknownRole) {
		return "unknown role"
	}
	if de, ok := errors.AsType[*api.Error](err); ok {
		return de.Message
	}
	return err.Error()
}

// inputMessage is the public text of a value the caller sent that could not be used: the argument path (when
// known) and the rule, which names only what the caller sent.
func inputMessage(gqlErr *gqlerror.Error, err error) string {
	msg := err.Error()
	var inner *gqlerror.Error
	if errors.As(err, &inner) && inner.Err != nil {
		msg = inner.Err.Error()
	}
	if p := gqlErr.Path.String(); p != "" {
		return p + ": " + msg
	}
	return msg
}

func codeOf(e *api.Error) string {
	switch {
	case errors.Is(e.Class, api.ErrNotFound):
		return guard.CodeNotFound
	case errors.Is(e.Class, api.ErrBadRequest):
		return guard.CodeBadRequest
	case errors.Is(e.Class, api.ErrForbidden):
		return guard.CodeForbidden
	case errors.Is(e.Class, api.ErrUnavailable):
		return guard.CodeUnavailable
	}
	return guard.CodeInternal
}

func setCode(e *gqlerror.Error, code string) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = code
}

// recoverPanic turns a resolver panic into an INTERNAL error (logged with the value, never shown).
func recoverPanic(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, v any) error {
		log.Error("resolver panic", "panic", v)
		return errors.New("panic")
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
