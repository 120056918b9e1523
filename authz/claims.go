package authz

import (
	"context"
	"slices"
)

// claimsKey carries the roles the authenticated token claims (an OIDC roles claim), bound to the subject the
// token authenticated: GrantPolicy honours them only for that principal.
type claimsKey struct{}

type claimedRoles struct {
	subject string
	roles   []string
}

// WithClaimedRoles returns a context carrying roles claimed by subject's token. Authentication calls it next to
// WithPrincipal; claimed roles add to the subject's role bindings (roles that do not exist are ignored).
func WithClaimedRoles(ctx context.Context, subject string, roles []string) context.Context {
	if len(roles) == 0 {
		return ctx
	}
	return context.WithValue(ctx, claimsKey{}, claimedRoles{subject: subject, roles: slices.Clone(roles)})
}

// ClaimedRoles returns the roles claimed for p in ctx, or nil when ctx carries none for p's subject.
func ClaimedRoles(ctx context.Context, p Principal) []string {
	c, ok := ctx.Value(claimsKey{}).(claimedRoles)
	if !ok || c.subject != p.Subject {
		return nil
	}
	return c.roles
}
