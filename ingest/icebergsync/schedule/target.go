package schedule

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/headwater-data/headwater/ingest/icebergsync"
	"github.com/headwater-data/headwater/ingest/icebergsync/icebergrest"
	"github.com/headwater-data/headwater/ingest/icebergsync/sigv4"
	"github.com/headwater-data/headwater/ingest/normalize"
)

// Client connects to the catalog (GET /v1/config) the way its entry says: a bearer token from TokenEnv, or OAuth2
// client credentials (golang.org/x/oauth2 fetches and refreshes the token; ADR 0049), or AWS SigV4 signing with
// the keys in the environment at the time of the sync (ADR 0059), or no Authorization.
func (c Catalog) Client(ctx context.Context, env func(string) string) (*icebergrest.Client, error) {
	hc := &http.Client{Timeout: icebergrest.DefaultTimeout}
	token := ""
	switch {
	case c.TokenEnv != "":
		token = env(c.TokenEnv)
	case c.OAuth2 != nil:
		cc := clientcredentials.Config{ClientID: c.OAuth2.ClientID, ClientSecret: env(c.OAuth2.ClientSecretEnv),
			TokenURL: c.OAuth2.TokenURI, Scopes: strings.Fields(c.OAuth2.Scope), AuthStyle: oauth2.AuthStyleInParams}
		hc = cc.Client(context.WithValue(ctx, oauth2.HTTPClient, &http.Client{Timeout: icebergrest.DefaultTimeout}))
		hc.Timeout = icebergrest.DefaultTimeout
	case c.SigV4 != nil:
		tr, err := sigv4.New(http.DefaultTransport, c.SigV4.Region, c.SigV4.Service, sigv4.Credentials{
			AccessKeyID: env(c.SigV4.AccessKeyIDEnv), SecretAccessKey: env(c.SigV4.SecretAccessKeyEnv),
			SessionToken: env(c.SigV4.SessionTokenEnv)})
		if err != nil {
			return nil, err
		}
		hc.Transport = tr
	}
	return icebergrest.NewClient(ctx, icebergrest.ClientConfig{URI: c.URI, Warehouse: c.Warehouse, Token: token,
		PageSize: c.PageSize, HTTP: hc})
}

// Target is the catalog as the sync names it: its name and the canonical namespace its tables are named in.
func (c Catalog) Target() (icebergsync.Catalog, error) {
	raw := c.Namespace
	if raw == "" {
		raw = c.URI
	}
	ns, err := normalize.CanonicalNamespace(raw)
	if err != nil {
		return icebergsync.Catalog{}, fmt.Errorf("catalog %s: %q (namespace, else uri) is not a namespace Headwater can name tables in: %w", c.Name, raw, err)
	}
	return icebergsync.Catalog{Name: c.Name, Namespace: ns}, nil
}

// RootNamespace is Root as the catalog's namespace levels (nil: the whole catalog).
func (c Catalog) RootNamespace() icebergrest.Namespace {
	if c.Root == "" {
		return nil
	}
	return icebergrest.Namespace(strings.Split(c.Root, "."))
}

// Syncer is the SyncFunc of a process: each catalog's client built per sync (a fresh GET /v1/config, so a
// catalog's changed prefix or endpoints are seen), the graph state read, the events published.
type Syncer struct {
	State     icebergsync.StateReader
	Publisher func(c Catalog, h Held) icebergsync.Publisher
	Env       func(string) string
}

// Sync implements SyncFunc.
func (s Syncer) Sync(ctx context.Context, c Catalog, h Held) (Outcome, error) {
	cat, err := c.Target()
	if err != nil {
		return Outcome{}, err
	}
	client, err := c.Client(ctx, s.Env)
	if err != nil {
		return Outcome{}, fmt.Errorf("catalog %s: %w", c.Name, err)
	}
	rep, err := icebergsync.Sync(ctx, client, cat, s.State, s.Publisher(c, h), icebergsync.Options{Root: c.RootNamespace()})
	return Outcome{Events: len(rep.EventIDs), Warnings: rep.Warnings}, err
}
