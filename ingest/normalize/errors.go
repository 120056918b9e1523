package normalize

import (
	"errors"
	"fmt"
)

// Entities and identity parts named in errors.
const (
	EntityDataset = "dataset"
	EntityJob     = "job"
	EntityField   = "field"

	PartNamespace = "namespace"
	PartName      = "name"
	PartField     = "field"
)

// Rules an identity can break.
const (
	RuleEmpty       = "empty"                  // namespace or name is empty
	RuleWhitespace  = "surrounding-whitespace" // leading or trailing white space (never trimmed silently)
	RuleControl     = "control-character"      // a C0 or C1 control character or DEL
	RuleUTF8        = "utf8"                   // not valid UTF-8
	RuleMaxLength   = "max-length"             // longer than MaxNamespaceBytes, MaxNameBytes or MaxFieldBytes
	RuleInvalidURI  = "invalid-uri"            // a scheme://authority namespace that does not parse
	RuleInvalidPort = "invalid-port"           // a port that is not a number in 1..65535
	RuleNoHost      = "missing-host"           // scheme://  with no host, bucket or account
)

// ErrInvalidIdentity is wrapped by every *IdentityError.
var ErrInvalidIdentity = errors.New("identity cannot be canonicalised")

// IdentityError says which part of which identity broke which rule.
type IdentityError struct {
	Entity string // dataset, job or field
	Part   string // namespace, name or field
	Rule   string
	Value  string // the offending value, cut to maxErrValue bytes
	Detail string
}

const maxErrValue = 128

func (e *IdentityError) Error() string {
	return fmt.Sprintf("%s %s %q: %s (rule %s)", e.Entity, e.Part, e.Value, e.Detail, e.Rule)
}

func (e *IdentityError) Unwrap() error { return ErrInvalidIdentity }

func identityErr(entity, part, rule, value, detail string) *IdentityError {
	if len(value) > maxErrValue {
		value = value[:maxErrValue] + "..."
	}
	return &IdentityError{Entity: entity, Part: part, Rule: rule, Value: value, Detail: detail}
}
