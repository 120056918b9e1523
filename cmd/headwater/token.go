package main

import (
	"context"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/graph"
)

// tokenCmd manages API tokens from an operator's shell (the GraphQL mutations do the same for principals
// holding MANAGE_GRANTS).
type tokenCmd struct {
	Create tokenCreateCmd `cmd:"" help:"Create an API token for a principal and print it once."`
	Revoke tokenRevokeCmd `cmd:"" help:"Revoke an API token by id."`
}

type tokenCreateCmd struct {
	Owner       string        `help:"Principal the token acts as (its role bindings apply)." required:""`
	Kind        string        `help:"Principal kind: user, service or producer." default:"service" enum:"user,service,producer"`
	Description string        `help:"What the token is for."`
	ExpiresIn   time.Duration `help:"Lifetime; 0 means no expiry." default:"0s"`
	Neo4j       graph.Config  `embed:"" prefix:"neo4j-"`
}

// withStore opens Neo4j for a short operator command and closes it afterwards.
func withStore(cfg graph.Config, fn func(ctx context.Context, s *graph.Store) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := graph.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { _ = store.Close(context.Background()) }() // the operation has committed or failed by now
	return fn(ctx, store)
}

func (c tokenCreateCmd) Run(rc *runCtx) error {
	return withStore(c.Neo4j, func(ctx context.Context, store *graph.Store) error { return c.create(ctx, rc, store) })
}

func (c tokenCreateCmd) create(ctx context.Context, rc *runCtx, store *graph.Store) error {
	req := apitoken.NewToken{Owner: c.Owner, Kind: c.Kind, Description: c.Description, CreatedBy: "cli"}
	if c.ExpiresIn > 0 {
		req.ExpiresAt = time.Now().Add(c.ExpiresIn)
	}
	tok, info, err := apitoken.NewStore(store, time.Now).Create(ctx, req)
	if err != nil {
		return err
	}
	rc.log.Info("api token created", "id", info.ID, "owner", c.Owner)
	_, err = fmt.Fprintln(rc.stdout, tok)
	return err
}

type tokenRevokeCmd struct {
	ID    string       `help:"Token id (the part after hw_ and before the next _)." required:""`
	Neo4j graph.Config `embed:"" prefix:"neo4j-"`
}

func (c tokenRevokeCmd) Run(rc *runCtx) error {
	return withStore(c.Neo4j, func(ctx context.Context, store *graph.Store) error {
		if err := apitoken.NewStore(store, time.Now).Revoke(ctx, c.ID, "cli"); err != nil {
			return err
		}
		_, err := fmt.Fprintf(rc.stdout, "revoked %s\n", c.ID)
		return err
	})
}
