package normalize

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// nsURI is a namespace split into its canonical parts. A namespace without "://" is opaque (bare).
type nsURI struct {
	scheme   string // lower-case, aliased; for bare platform namespaces the platform ("bigquery")
	userinfo string // kept only for Azure stores (the container)
	hosts    []string
	rest     string // path/query after the authority, trailing slashes removed
	bare     string // the whole namespace when it has no "://"
	isURI    bool
}

func (u nsURI) String() string {
	if !u.isURI {
		return u.bare
	}
	var b strings.Builder
	b.WriteString(u.scheme + "://")
	if u.userinfo != "" {
		b.WriteString(u.userinfo + "@")
	}
	b.WriteString(strings.Join(u.hosts, ","))
	b.WriteString(u.rest)
	return b.String()
}

// parseNamespace canonicalises a namespace: scheme and host lower-case, scheme aliases, the default port in the
// scheme's one form (portWritten), credentials dropped, no trailing slashes.
func parseNamespace(entity, ns string) (nsURI, error) {
	if err := checkText(entity, PartNamespace, ns); err != nil {
		return nsURI{}, err
	}
	scheme, rest, ok := strings.Cut(ns, "://")
	if !ok {
		return bareNamespace(entity, ns)
	}
	if !validScheme(scheme) {
		return nsURI{}, identityErr(entity, PartNamespace, RuleInvalidURI, ns, "the scheme is not a valid URI scheme")
	}
	u := nsURI{scheme: schemeAlias(strings.ToLower(scheme)), isURI: true}
	authority, path := splitAuthority(rest)
	u.rest = strings.TrimRight(path, "/")
	if err := u.setAuthority(entity, ns, authority); err != nil {
		if lf, ok := localFileNamespace(u.scheme, rest); ok {
			return lf, nil
		}
		return nsURI{}, err
	}
	return u, nil
}

// localFileNamespace: an embedded database's namespace names a local file, not a host (dbt-duckdb sends
// duckdb://{profile path}, so an absolute path gives duckdb:///abs/warehouse.duckdb, and ":memory:" gives
// duckdb://:memory:). When the authority does not parse as a host, the remainder is the file's path and is
// kept verbatim but for trailing slashes (paths are case-sensitive). Only a remainder of nothing but slashes,
// which names no file, is still refused.
func localFileNamespace(scheme, rest string) (nsURI, bool) {
	if !isLocalFileDB(scheme) {
		return nsURI{}, false
	}
	path := strings.TrimRight(rest, "/")
	if path == "" {
		return nsURI{}, false
	}
	return nsURI{scheme: scheme, rest: path, isURI: true}, true
}

func bareNamespace(entity, ns string) (nsURI, error) {
	trimmed := strings.TrimRight(ns, "/")
	if trimmed == "" {
		return nsURI{}, identityErr(entity, PartNamespace, RuleEmpty, ns, "the namespace is only slashes")
	}
	if lower := strings.ToLower(trimmed); isBareNamespace(lower) {
		return nsURI{scheme: lower, bare: lower}, nil
	}
	return nsURI{bare: trimmed}, nil
}

// splitAuthority cuts "host:port/path?q" into "host:port" and "/path?q".
func splitAuthority(rest string) (authority, path string) {
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		return rest[:i], rest[i:]
	}
	return rest, ""
}

func (u *nsURI) setAuthority(entity, ns, authority string) error {
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		if isAzureStore(u.scheme) {
			u.userinfo = authority[:at]
		}
		authority = authority[at+1:]
	}
	if authority == "" {
		if hostOptional(u.scheme) && u.userinfo == "" {
			u.bareIfEmpty()
			return nil
		}
		return identityErr(entity, PartNamespace, RuleNoHost, ns, "the namespace names no host, bucket or account")
	}
	for hp := range strings.SplitSeq(authority, ",") {
		h, err := canonicalHostPort(entity, ns, u.scheme, hp)
		if err != nil {
			return err
		}
		u.hosts = append(u.hosts, h)
	}
	return nil
}

// bareIfEmpty turns "file://" (no host, no path) into the OpenLineage namespace "file".
func (u *nsURI) bareIfEmpty() {
	if u.rest == "" {
		u.isURI, u.bare = false, u.scheme
	}
}

// canonicalHostPort lower-cases the host and writes the scheme's default port in its one form: added when
// missing where the naming spec writes it, dropped where it does not (portWritten).
func canonicalHostPort(entity, ns, scheme, hp string) (string, error) {
	host, port, ok := splitHostPort(hp)
	if !ok || host == "" || !validHost(host) {
		return "", identityErr(entity, PartNamespace, RuleInvalidURI, ns, "the host "+strconv.Quote(hp)+" is not a valid host")
	}
	host = strings.ToLower(host)
	def := defaultPort(scheme)
	if port == "" {
		if def != "" && portWritten(scheme) {
			return host + ":" + def, nil
		}
		return host, nil
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 || strings.HasPrefix(port, "+") {
		return "", identityErr(entity, PartNamespace, RuleInvalidPort, ns, "the port "+strconv.Quote(port)+" is not a number in 1..65535")
	}
	port = strconv.Itoa(p) // no leading zeros
	if port == def && !portWritten(scheme) {
		return host, nil
	}
	return host + ":" + port, nil
}

// splitHostPort handles "host", "host:port", "[v6]" and "[v6]:port".
func splitHostPort(hp string) (host, port string, ok bool) {
	if strings.HasPrefix(hp, "[") {
		end := strings.IndexByte(hp, ']')
		if end < 0 {
			return "", "", false
		}
		host, after := hp[:end+1], hp[end+1:]
		if after == "" {
			return host, "", true
		}
		port, found := strings.CutPrefix(after, ":")
		return host, port, found
	}
	host, port, _ = strings.Cut(hp, ":")
	return host, port, !strings.Contains(port, ":")
}

// validScheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) per RFC 3986.
func validScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// validHost accepts RFC 3986 reg-names (unreserved, pct-encoded, sub-delims but ",") and bracketed IPv6.
func validHost(h string) bool {
	if strings.HasPrefix(h, "[") {
		return strings.HasSuffix(h, "]") && len(h) > 2 && strings.Trim(h[1:len(h)-1], "0123456789abcdefABCDEF:.") == ""
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if isAlpha(c) || isDigit(c) || strings.IndexByte("-._~%!$&'()*+;=", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// checkText rejects empty values, values over the part's length cap, surrounding white space, invalid UTF-8 and
// control characters (C0, DEL, C1: U+0085 included).
func checkText(entity, part, s string) error {
	if s == "" {
		return identityErr(entity, part, RuleEmpty, s, "the "+part+" is empty")
	}
	if err := checkChars(entity, part, s); err != nil {
		return err
	}
	if strings.TrimSpace(s) != s {
		return identityErr(entity, part, RuleWhitespace, s, "the "+part+" has leading or trailing white space")
	}
	return nil
}

// checkChars applies the rules every identity part and field path obeys: the length cap, UTF-8, no controls.
func checkChars(entity, part, s string) error {
	if limit := maxBytes(part); len(s) > limit {
		return identityErr(entity, part, RuleMaxLength, s,
			"the "+part+" is "+strconv.Itoa(len(s))+" bytes, over the limit of "+strconv.Itoa(limit))
	}
	if !utf8.ValidString(s) {
		return identityErr(entity, part, RuleUTF8, s, "the "+part+" is not valid UTF-8")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return identityErr(entity, part, RuleControl, s,
				"the "+part+" contains the control character "+strconv.QuoteRune(r))
		}
	}
	return nil
}
