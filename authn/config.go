package authn

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"
)

// Limits of the settings.
const (
	maxClockSkew = 5 * time.Minute
	minJWKSAge   = time.Minute
	// MaxTokenCacheTTL bounds Config.TokenCacheTTL: how long another replica may keep accepting an API token
	// revoked elsewhere (apitoken.Store.WithCache caps its TTL at it too).
	MaxTokenCacheTTL = time.Minute
)

// Config is the authentication configuration. OIDC is on when Issuer is set; API tokens are always accepted.
type Config struct {
	Issuer         string        `help:"OIDC issuer URL; JWT bearer tokens must carry it as iss. Empty: only API tokens." default:"" env:"HEADWATER_AUTH_ISSUER" yaml:"issuer"`
	Audience       string        `help:"Audience JWTs must carry in aud (required with an issuer)." default:"" env:"HEADWATER_AUTH_AUDIENCE" yaml:"audience"`
	JWKSURL        string        `help:"JWKS URL; empty: discovered from the issuer's /.well-known/openid-configuration." default:"" env:"HEADWATER_AUTH_JWKS_URL" yaml:"jwksUrl"`
	ClockSkew      time.Duration `help:"Tolerance on exp, nbf and iat." default:"60s" env:"HEADWATER_AUTH_CLOCK_SKEW" yaml:"clockSkew"`
	SubjectClaim   string        `help:"JWT claim that names the principal." default:"sub" env:"HEADWATER_AUTH_SUBJECT_CLAIM" yaml:"subjectClaim"`
	RolesClaim     string        `help:"JWT claim (dot path, e.g. realm_access.roles) listing role names added to the principal's bindings; empty: none." default:"" env:"HEADWATER_AUTH_ROLES_CLAIM" yaml:"rolesClaim"`
	JWKSMaxAge     time.Duration `help:"Refetch the JWKS when older than this." default:"1h" env:"HEADWATER_AUTH_JWKS_MAX_AGE" yaml:"jwksMaxAge"`
	JWKSMinRefresh time.Duration `help:"Least time between JWKS refetches triggered by an unknown key id." default:"30s" env:"HEADWATER_AUTH_JWKS_MIN_REFRESH" yaml:"jwksMinRefresh"`
	HTTPTimeout    time.Duration `help:"Timeout of discovery and JWKS requests." default:"10s" env:"HEADWATER_AUTH_HTTP_TIMEOUT" yaml:"httpTimeout"`
	TokenCacheTTL  time.Duration `help:"How long a verified API token's record is reused without reading Neo4j (secret, revocation and expiry are still checked on every request); a revocation through this server applies at once, one made elsewhere within this time; an unknown token id is remembered as unknown for this time too. 0: read the token on every request." default:"1s" env:"HEADWATER_AUTH_TOKEN_CACHE_TTL" yaml:"tokenCacheTTL"`
	DevNoAuth      bool          `help:"Development only: requests without a token act as the anonymous principal." default:"false" env:"HEADWATER_DEV_NO_AUTH" yaml:"devNoAuth"`
}

// OIDC reports whether JWT bearer tokens are accepted.
func (c Config) OIDC() bool { return c.Issuer != "" }

// Validate reports the first invalid setting by name.
func (c Config) Validate() error {
	if c.ClockSkew < 0 || c.ClockSkew > maxClockSkew {
		return fmt.Errorf("auth.clock-skew: must be between 0 and %s, got %s", maxClockSkew, c.ClockSkew)
	}
	if c.TokenCacheTTL < 0 || c.TokenCacheTTL > MaxTokenCacheTTL {
		return fmt.Errorf("auth.token-cache-ttl: must be between 0 and %s, got %s", MaxTokenCacheTTL, c.TokenCacheTTL)
	}
	if !c.OIDC() {
		if c.Audience != "" || c.JWKSURL != "" {
			return errors.New("auth.issuer: required when auth.audience or auth.jwks-url is set")
		}
		return nil
	}
	switch {
	case c.Audience == "":
		return errors.New("auth.audience: required with auth.issuer (tokens for other audiences must be refused)")
	case c.SubjectClaim == "":
		return errors.New("auth.subject-claim: must not be empty")
	case c.JWKSMaxAge < minJWKSAge:
		return fmt.Errorf("auth.jwks-max-age: must be at least %s", minJWKSAge)
	case c.JWKSMinRefresh < 0 || c.JWKSMinRefresh > c.JWKSMaxAge:
		return errors.New("auth.jwks-min-refresh: must be between 0 and auth.jwks-max-age")
	case c.HTTPTimeout <= 0:
		return errors.New("auth.http-timeout: must be positive")
	}
	if err := checkURL("auth.issuer", c.Issuer); err != nil {
		return err
	}
	if c.JWKSURL != "" {
		return checkURL("auth.jwks-url", c.JWKSURL)
	}
	return nil
}

// checkURL accepts https, and http only to a loopback host (development, tests).
func checkURL(name, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s: %q is not an absolute URL", name, raw)
	}
	if u.Scheme == "https" || (u.Scheme == "http" && isLoopback(u.Hostname())) {
		return nil
	}
	return fmt.Errorf("%s: %q must use https (http only to a loopback host)", name, raw)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
