package schedule

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The catalogs file's defaults and bounds (docs/iceberg.md "Several catalogs, on a schedule").
const (
	// DefaultInterval is how often a catalog is synced when its entry names no interval.
	DefaultInterval = 15 * time.Minute
	// MinInterval is the shortest interval accepted (a sync lists every namespace and table of its root).
	MinInterval = time.Second
	// DefaultSyncTimeout bounds one sync of one catalog (the scan, the graph read and the publishing).
	DefaultSyncTimeout = 10 * time.Minute
	// DefaultLeaseTTL is how long a process's claim to sync a catalog lasts without renewal: a process that dies
	// holding it is replaced after at most this long. It is renewed every TTL/3 while the process runs.
	DefaultLeaseTTL = time.Minute
	// MinLeaseTTL is the shortest lease accepted (renewals every TTL/3 must be far from the transaction timeout).
	MinLeaseTTL = 3 * time.Second
	// DefaultBackoffInitial and DefaultBackoffMax bound the retries of a failing catalog: the first retry after
	// Initial, doubling with each failure up to Max (and never beyond the catalog's interval).
	DefaultBackoffInitial = 10 * time.Second
	DefaultBackoffMax     = 10 * time.Minute
	// MaxCatalogs bounds the catalogs of one file (each runs its own loop and lease).
	MaxCatalogs = 64
	// DefaultOAuth2Scope is the scope Iceberg REST clients ask for by default.
	DefaultOAuth2Scope = "catalog"
)

// File is the catalogs file `headwater serve --catalogs-file` and `headwater catalog sync --catalogs-file` read.
type File struct {
	// LeaseTTL is the one-active-syncer lease's lifetime (DefaultLeaseTTL when 0).
	LeaseTTL time.Duration `yaml:"leaseTTL"`
	Backoff  Backoff       `yaml:"backoff"`
	Catalogs []Catalog     `yaml:"catalogs"`
}

// Backoff bounds the retries of a failing catalog.
type Backoff struct {
	Initial time.Duration `yaml:"initial"`
	Max     time.Duration `yaml:"max"`
}

// Catalog is one Iceberg REST catalog to sync.
type Catalog struct {
	// Name is the catalog's name in Headwater: its uuid identifiers are in iceberg://<name>, its lease and metrics
	// carry it. Lower case letters, digits, '-' and '_'.
	Name string `yaml:"name"`
	// URI is the catalog's REST base URI, as Iceberg clients are configured with it.
	URI string `yaml:"uri"`
	// Warehouse is sent to GET /v1/config (Polaris, Lakekeeper and Unity choose the catalog by it).
	Warehouse string `yaml:"warehouse"`
	// Namespace is the OpenLineage namespace the tables are named in (default: URI, canonical).
	Namespace string `yaml:"namespace"`
	// Root limits the sync to one namespace (dotted) and what lies below it.
	Root string `yaml:"root"`
	// Interval between syncs (DefaultInterval when 0).
	Interval time.Duration `yaml:"interval"`
	// Timeout of one sync (DefaultSyncTimeout when 0).
	Timeout time.Duration `yaml:"timeout"`
	// Principal is the service principal the scheduled sync publishes as in `serve` (it needs PRODUCE on the
	// catalog's namespace and on iceberg://<name>; docs/permissions.md).
	Principal string `yaml:"principal"`
	// PageSize asked of the catalog's list endpoints (0: the client's default).
	PageSize int `yaml:"pageSize"`
	// How the catalog is reached: at most one of a bearer token in an environment variable (TokenEnv), or OAuth2
	// client credentials; neither: no Authorization header. Secrets are never written in the file itself.
	TokenEnv string  `yaml:"tokenEnv"`
	OAuth2   *OAuth2 `yaml:"oauth2"`
	// SigV4 signs every request with AWS Signature Version 4 (AWS Glue's and S3 Tables' Iceberg REST endpoints).
	SigV4 *SigV4 `yaml:"sigv4"`
}

// SigV4 is AWS request signing: the region and service the endpoint signs for, and the environment variables
// holding the access key (the AWS CLI's own names by default).
type SigV4 struct {
	Region string `yaml:"region"`
	// Service signed for (DefaultSigV4Service, Glue's; "s3tables" for S3 Tables' endpoint).
	Service            string `yaml:"service"`
	AccessKeyIDEnv     string `yaml:"accessKeyIdEnv"`     // default AWS_ACCESS_KEY_ID
	SecretAccessKeyEnv string `yaml:"secretAccessKeyEnv"` // default AWS_SECRET_ACCESS_KEY
	SessionTokenEnv    string `yaml:"sessionTokenEnv"`    // default AWS_SESSION_TOKEN; optional (temporary credentials)
}

// Defaults of a sigv4 entry.
const (
	DefaultSigV4Service = "glue"
	defaultAccessKeyEnv = "AWS_ACCESS_KEY_ID"
	defaultSecretEnv    = "AWS_SECRET_ACCESS_KEY"
	defaultSessionEnv   = "AWS_SESSION_TOKEN"
)

var awsRegion = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)

// OAuth2 is the client-credentials grant (RFC 6749 §4.4) the catalog's token endpoint serves.
type OAuth2 struct {
	// TokenURI is the token endpoint (default: <uri>/v1/oauth/tokens, the Iceberg REST spec's own).
	TokenURI string `yaml:"tokenUri"`
	ClientID string `yaml:"clientId"`
	// ClientSecretEnv names the environment variable holding the client secret.
	ClientSecretEnv string `yaml:"clientSecretEnv"`
	// Scope asked for (DefaultOAuth2Scope when empty; Polaris wants PRINCIPAL_ROLE:ALL).
	Scope string `yaml:"scope"`
}

var catalogName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// LoadFile reads and checks a catalogs file; every error names the entry, the field and the rule.
func LoadFile(path string) (File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return File{}, fmt.Errorf("catalogs file: %w", err)
	}
	f, err := Parse(raw, os.Getenv)
	if err != nil {
		return File{}, fmt.Errorf("catalogs file %s: %w", path, err)
	}
	return f, nil
}

// Parse decodes a catalogs file (unknown keys are errors: a misspelt key must not silently fall back to a
// default), fills the defaults and checks every field; env resolves the environment variables it names.
func Parse(raw []byte, env func(string) string) (File, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) { // an empty file: "names no catalog" below
		return File{}, err
	}
	if err := f.fill(env); err != nil {
		return File{}, err
	}
	return f, nil
}

func (f *File) fill(env func(string) string) error {
	if f.LeaseTTL == 0 {
		f.LeaseTTL = DefaultLeaseTTL
	}
	if f.LeaseTTL < MinLeaseTTL {
		return fmt.Errorf("leaseTTL: %s is below the minimum %s", f.LeaseTTL, MinLeaseTTL)
	}
	if f.Backoff.Initial == 0 {
		f.Backoff.Initial = DefaultBackoffInitial
	}
	if f.Backoff.Max == 0 {
		f.Backoff.Max = DefaultBackoffMax
	}
	if f.Backoff.Initial < 0 || f.Backoff.Max < f.Backoff.Initial {
		return fmt.Errorf("backoff: initial %s and max %s must be positive with initial <= max", f.Backoff.Initial, f.Backoff.Max)
	}
	if len(f.Catalogs) == 0 {
		return errors.New("catalogs: the file names no catalog")
	}
	if len(f.Catalogs) > MaxCatalogs {
		return fmt.Errorf("catalogs: %d entries, at most %d", len(f.Catalogs), MaxCatalogs)
	}
	seen := map[string]bool{}
	for i := range f.Catalogs {
		c := &f.Catalogs[i]
		if err := c.fill(env); err != nil {
			return fmt.Errorf("catalogs[%d] (%s): %w", i, c.Name, err)
		}
		if seen[c.Name] {
			return fmt.Errorf("catalogs[%d].name: %q is named twice (a catalog's name is its identity: iceberg://<name>)", i, c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

func (c *Catalog) fill(env func(string) string) error {
	if !catalogName.MatchString(c.Name) {
		return fmt.Errorf("name: %q must be 1-63 lower case letters, digits, '-' or '_', starting with a letter or digit", c.Name)
	}
	u, err := url.Parse(c.URI)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("uri: %q must be an absolute http or https URI", c.URI)
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Interval < MinInterval {
		return fmt.Errorf("interval: %s is below the minimum %s", c.Interval, MinInterval)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultSyncTimeout
	}
	if c.Timeout < 0 {
		return fmt.Errorf("timeout: %s must be positive", c.Timeout)
	}
	if c.PageSize < 0 {
		return fmt.Errorf("pageSize: %d must not be negative", c.PageSize)
	}
	if n := btoi(c.TokenEnv != "") + btoi(c.OAuth2 != nil) + btoi(c.SigV4 != nil); n > 1 {
		return errors.New("tokenEnv, oauth2, sigv4: give at most one way to reach the catalog")
	}
	if err := c.SigV4.fill(env); err != nil {
		return err
	}
	if c.TokenEnv != "" && env(c.TokenEnv) == "" {
		return fmt.Errorf("tokenEnv: the environment variable %s is empty or unset", c.TokenEnv)
	}
	if o := c.OAuth2; o != nil {
		if o.ClientID == "" {
			return errors.New("oauth2.clientId: required")
		}
		if o.ClientSecretEnv == "" || env(o.ClientSecretEnv) == "" {
			return fmt.Errorf("oauth2.clientSecretEnv: must name a set environment variable (%q is empty or unset)", o.ClientSecretEnv)
		}
		if o.TokenURI == "" {
			o.TokenURI = strings.TrimSuffix(c.URI, "/") + "/v1/oauth/tokens"
		} else if t, err := url.Parse(o.TokenURI); err != nil || (t.Scheme != "http" && t.Scheme != "https") || t.Host == "" {
			return fmt.Errorf("oauth2.tokenUri: %q must be an absolute http or https URI", o.TokenURI)
		}
		if o.Scope == "" {
			o.Scope = DefaultOAuth2Scope
		}
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fill checks a sigv4 entry (nil: none) and fills its defaults.
func (v *SigV4) fill(env func(string) string) error {
	if v == nil {
		return nil
	}
	if !awsRegion.MatchString(v.Region) {
		return fmt.Errorf("sigv4.region: %q must be an AWS region such as us-east-1", v.Region)
	}
	if v.Service == "" {
		v.Service = DefaultSigV4Service
	}
	for _, e := range []struct {
		field string
		name  *string
		def   string
	}{{"accessKeyIdEnv", &v.AccessKeyIDEnv, defaultAccessKeyEnv}, {"secretAccessKeyEnv", &v.SecretAccessKeyEnv, defaultSecretEnv}} {
		if *e.name == "" {
			*e.name = e.def
		}
		if env(*e.name) == "" {
			return fmt.Errorf("sigv4.%s: the environment variable %s is empty or unset", e.field, *e.name)
		}
	}
	if v.SessionTokenEnv == "" {
		v.SessionTokenEnv = defaultSessionEnv
	}
	return nil
}

// Named returns the file's catalog of that name.
func (f File) Named(name string) (Catalog, bool) {
	for _, c := range f.Catalogs {
		if c.Name == name {
			return c, true
		}
	}
	return Catalog{}, false
}
