package icebergsync

import (
	"net/url"
	"strings"
)

// locationIdentifierType is the symlinks identifier type of a table's location (ADR 0083).
const locationIdentifierType = "LOCATION"

// locationName is the OpenLineage dataset name of an Iceberg table's location, as Spark's listener names the
// table it reads or writes through a catalog (OpenLineage's naming: a local path is namespace `file` and the
// absolute path; `scheme://authority/path` is namespace `scheme://authority` and the path without its leading
// slash). ok is false for a location it cannot name (empty, relative, or a URI without an authority).
func locationName(location string) (ns, name string, ok bool) {
	location = strings.TrimRight(location, "/")
	if strings.HasPrefix(location, "/") {
		return "file", location, true
	}
	u, err := url.Parse(location)
	if err != nil || u.Scheme == "" {
		return "", "", false
	}
	if strings.EqualFold(u.Scheme, "file") {
		if u.Path == "" || !strings.HasPrefix(u.Path, "/") {
			return "", "", false
		}
		return "file", u.Path, true
	}
	p := strings.TrimPrefix(u.Path, "/")
	if u.Host == "" || p == "" {
		return "", "", false
	}
	authority := u.Host
	if u.User != nil { // abfss://<container>@<account>...: the container is part of the namespace
		authority = u.User.String() + "@" + u.Host
	}
	return u.Scheme + "://" + authority, p, true
}
