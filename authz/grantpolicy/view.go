package grantpolicy

import (
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
)

// view is one effective role set compiled into a trie of allow/deny masks.
type view struct {
	table       *privTable
	root        masks
	envs        map[string]masks
	nss         map[string]*nsNode
	anyDeny     privSet // every privilege denied anywhere
	fingerprint string
	global      bool
}

type nsNode struct {
	here     masks
	prefix   segNode
	datasets map[string]masks
	jobs     map[string]masks
}

type segNode struct {
	here     masks
	children map[string]*segNode
}

func masksOf(g grant.Grant) masks {
	if g.Effect == grant.Deny {
		return masks{deny: bit(g.Privilege)}
	}
	return masks{allow: bit(g.Privilege)}
}

func (v *view) add(g grant.Grant) {
	m := masksOf(g)
	v.anyDeny |= m.deny
	switch g.On.Kind {
	case grant.SecRoot:
		v.root = v.root.or(m)
	case grant.SecEnvironment:
		v.envs[g.On.Environment] = v.envs[g.On.Environment].or(m)
	case grant.SecNamespace:
		n := v.ns(g.On.Namespace)
		n.here = n.here.or(m)
	case grant.SecPrefix:
		s := v.ns(g.On.Namespace).prefix.descend(g.On.Name)
		s.here = s.here.or(m)
	case grant.SecDataset:
		n := v.ns(g.On.Namespace)
		n.datasets = orInto(n.datasets, g.On.Name, m)
	case grant.SecJob:
		n := v.ns(g.On.Namespace)
		n.jobs = orInto(n.jobs, g.On.Name, m)
	}
}

func orInto(m map[string]masks, k string, x masks) map[string]masks {
	if m == nil {
		m = map[string]masks{}
	}
	m[k] = m[k].or(x)
	return m
}

func (v *view) ns(name string) *nsNode {
	n, ok := v.nss[name]
	if !ok {
		n = &nsNode{}
		v.nss[name] = n
	}
	return n
}

// descend returns the node of a name's segments, creating it.
func (s *segNode) descend(name string) *segNode {
	cur := s
	for seg := range grant.Segments(name) {
		next, ok := cur.children[seg]
		if !ok {
			if cur.children == nil {
				cur.children = map[string]*segNode{}
			}
			next = &segNode{}
			cur.children[seg] = next
		}
		cur = next
	}
	return cur
}

// collect ORs the masks of every prefix node on a name's segment path.
func (s *segNode) collect(name string) masks {
	var acc masks
	cur := s
	for seg := range grant.Segments(name) {
		next, ok := cur.children[seg]
		if !ok {
			break
		}
		acc = acc.or(next.here)
		cur = next
	}
	return acc
}

// path returns the masks accumulated from the root down to (and including) the namespace.
func (v *view) path(env, ns string) (masks, *nsNode) {
	acc := v.root
	if env != "" {
		acc = acc.or(v.envs[env])
	}
	n := v.nss[ns]
	if n != nil {
		acc = acc.or(n.here)
	}
	return acc, n
}

// can evaluates a candidate node. A candidate without a namespace (known by key only) is allowed only when
// nothing could deny it: priv held on ROOT and never denied anywhere.
func (v *view) can(priv privSet, c authz.Candidate, envOf EnvironmentOf) bool {
	if c.Namespace == "" {
		return v.table.effective(v.root)&priv != 0 && v.table.implying(v.anyDeny)&priv == 0
	}
	leaf := grant.SecDataset
	if c.Kind == authz.KindJob {
		leaf = grant.SecJob
	}
	return v.eval(envName(envOf, c.Namespace), c.Namespace, c.Name, leaf)&priv != 0
}

// covers reports whether priv holds on everything in namespace ns, now and later: effective on the namespace's
// path, and nothing beneath it (a prefix, a dataset, a job) denies a privilege priv implies.
func (v *view) covers(priv privSet, env, ns string) bool {
	acc, n := v.path(env, ns)
	if v.table.effective(acc)&priv != priv {
		return false
	}
	if n == nil {
		return true
	}
	deny := n.prefix.denies()
	for _, m := range n.datasets {
		deny |= m.deny
	}
	for _, m := range n.jobs {
		deny |= m.deny
	}
	return v.table.implying(deny)&priv == 0
}

// denies ORs the deny masks of a prefix node and every node below it.
func (s *segNode) denies() privSet {
	d := s.here.deny
	for _, c := range s.children {
		d |= c.denies()
	}
	return d
}

// on evaluates a securable itself.
func (v *view) on(s grant.Securable, envOf EnvironmentOf) privSet {
	switch s.Kind {
	case grant.SecRoot:
		return v.table.effective(v.root)
	case grant.SecEnvironment:
		return v.table.effective(v.root.or(v.envs[s.Environment]))
	}
	return v.eval(envName(envOf, s.Namespace), s.Namespace, s.Name, s.Kind)
}

// eval walks root, environment, namespace, name segments and the exact node of kind leaf.
func (v *view) eval(env, ns, name string, leaf grant.SecurableKind) privSet {
	acc, n := v.path(env, ns)
	if n != nil && leaf != grant.SecNamespace {
		acc = acc.or(n.prefix.collect(name))
		switch leaf {
		case grant.SecDataset:
			acc = acc.or(n.datasets[name])
		case grant.SecJob:
			acc = acc.or(n.jobs[name])
		}
	}
	return v.table.effective(acc)
}

func envName(envOf EnvironmentOf, ns string) string {
	if envOf == nil {
		return ""
	}
	return envOf(ns)
}
