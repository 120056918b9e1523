package authz

import "errors"

// Error classes of the permission model; callers map them with errors.Is.
var (
	// ErrInvalid means a role, grant, binding, setting or policy file is malformed; the message names what.
	ErrInvalid = errors.New("invalid permission setting")
	// ErrForbidden means the caller lacks the privilege an operation needs.
	ErrForbidden = errors.New("forbidden")
	// ErrUnavailable means the grant store could not be read or written.
	ErrUnavailable = errors.New("grant store unavailable")
)
