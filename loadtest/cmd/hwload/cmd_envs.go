package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/headwater-data/headwater/loadtest/gen"
)

// EnvsCmd prints the namespace-to-environment map of a prefix in the service's --identity-environments syntax,
// so the service computes the same dataset keys (the environment is part of the key) as the history loader.
type EnvsCmd struct {
	Prefix []string `help:"Namespace prefix; repeat for several." required:""`
}

// Run prints KEY=VALUE;... for every dataset namespace of the prefixes.
func (c *EnvsCmd) Run(_ *env) error {
	var parts []string
	for _, p := range c.Prefix {
		for ns, env := range gen.Environments(p) {
			parts = append(parts, ns+"="+env)
		}
	}
	sort.Strings(parts)
	_, err := fmt.Println(strings.Join(parts, ";"))
	return err
}
