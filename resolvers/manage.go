package resolvers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/manage"
	"github.com/headwater-data/headwater/resolvers/model"
)

// errNoManagement answers management mutations on a server wired without a Manager or TokenManager: the
// caller gets FORBIDDEN like any refused operation.
var errNoManagement = fmt.Errorf("%w: management is not enabled", authz.ErrForbidden)

// manage runs one grant-management operation as the caller.
func (r *Resolver) manage(ctx context.Context, op func(*manage.Manager, authz.Principal) error) (bool, error) {
	if r.manager == nil {
		return false, errNoManagement
	}
	if err := op(r.manager, authz.FromContext(ctx)); err != nil {
		return false, err
	}
	return true, nil
}

// grantOf maps a GraphQL grant to the model's.
func grantOf(in model.GrantInput) (grant.Grant, error) {
	on, err := securableOf(in.On)
	if err != nil {
		return grant.Grant{}, err
	}
	eff := grant.Allow
	if in.Effect != nil && *in.Effect == model.GrantEffectDeny {
		eff = grant.Deny
	}
	return grant.Grant{Role: in.Role, Privilege: authz.Privilege(in.Privilege), Effect: eff, On: on,
		Source: grant.SourceAPI}, nil
}

// securableOf maps the policy-file shaped input to a securable; Validate (in the Manager) checks the rest.
func securableOf(in *model.SecurableInput) (grant.Securable, error) {
	if in == nil {
		return grant.Securable{}, fmt.Errorf("%w: on: a securable is required", authz.ErrInvalid)
	}
	ns, set := deref(in.Namespace), 0
	var s grant.Securable
	pick := func(kind grant.SecurableKind, name *string) {
		if name != nil {
			set++
			s = grant.Securable{Kind: kind, Namespace: ns, Name: *name}
		}
	}
	pick(grant.SecPrefix, in.Prefix)
	pick(grant.SecDataset, in.Dataset)
	pick(grant.SecJob, in.Job)
	switch {
	case deref(in.All):
		set++
		s = grant.Root()
	case in.Environment != nil:
		set++
		s = grant.Securable{Kind: grant.SecEnvironment, Environment: *in.Environment}
	case set == 0 && in.Namespace != nil:
		set++
		s = grant.Securable{Kind: grant.SecNamespace, Namespace: ns}
	}
	if set != 1 || (in.Environment != nil && in.Namespace != nil) || (deref(in.All) && in.Namespace != nil) {
		return grant.Securable{}, fmt.Errorf("%w: on: give exactly one of all, environment, namespace (with at most one of prefix, dataset, job)", authz.ErrInvalid)
	}
	return s, nil
}

// createToken creates an API token as the caller.
func (r *Resolver) createToken(ctx context.Context, in model.APITokenInput) (*model.CreatedAPIToken, error) {
	if r.tokens == nil {
		return nil, errNoManagement
	}
	req := apitoken.NewToken{Owner: in.Owner, Kind: strings.ToLower(string(in.Kind)), Description: deref(in.Description)}
	if in.ExpiresAt != nil {
		req.ExpiresAt = *in.ExpiresAt
	}
	tok, info, err := r.tokens.Create(ctx, authz.FromContext(ctx), req)
	if err != nil {
		return nil, err
	}
	out := &model.APIToken{ID: info.ID, Owner: info.Owner, Kind: model.TokenKind(strings.ToUpper(info.Kind)),
		CreatedAt: info.CreatedAt}
	if info.Description != "" {
		out.Description = &info.Description
	}
	if !info.ExpiresAt.IsZero() {
		out.ExpiresAt = &info.ExpiresAt
	}
	return &model.CreatedAPIToken{Token: tok, Info: out}, nil
}

// revokeToken revokes a token as the caller. An unknown id answers like a refused one, so token ids cannot be
// probed.
func (r *Resolver) revokeToken(ctx context.Context, id string) (bool, error) {
	if r.tokens == nil {
		return false, errNoManagement
	}
	err := r.tokens.Revoke(ctx, authz.FromContext(ctx), id)
	if errors.Is(err, apitoken.ErrNotFound) {
		return false, fmt.Errorf("%w: token %s", apitoken.ErrForbidden, id)
	}
	return err == nil, err
}
