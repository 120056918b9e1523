package policyfile

import (
	"errors"
	"testing"

	"github.com/headwater-data/headwater/authz"
)

func TestParsePolicyFileRejects(t *testing.T) {
	bad := map[string]string{
		"version":        "version: 2\n",
		"unknown key":    "version: 1\nrolez: []\n",
		"mode":           "version: 1\nhiddenNeighbours: BLUR\n",
		"privilege":      "version: 1\nroles: [{name: r, grants: [{privileges: [READ], on: {all: true}}]}]\n",
		"two leaves":     "version: 1\nroles: [{name: r, grants: [{privileges: [DESCRIBE], on: {namespace: n, prefix: a, job: b}}]}]\n",
		"all and more":   "version: 1\nroles: [{name: r, grants: [{privileges: [DESCRIBE], on: {all: true, namespace: n}}]}]\n",
		"undeclared":     "version: 1\nbindings: [{role: ghost, subjects: [a]}]\n",
		"produce prefix": "version: 1\nroles: [{name: r, grants: [{privileges: [PRODUCE], on: {namespace: n, prefix: a}}]}]\n",
	}
	for name, doc := range bad {
		if _, err := ParsePolicyFile([]byte(doc)); !errors.Is(err, authz.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}
