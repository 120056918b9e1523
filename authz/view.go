package authz

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

func (g Grant) masks() masks {
	if g.Effect == Deny {
		return masks{deny: g.Privilege.bit()}
	}
	return masks{allow: g.Privilege.bit()}
}

func (v *view) add(g Grant) {
	m := g.masks()
	v.anyDeny |= m.deny
	switch g.On.Kind {
	case SecRoot:
		v.root = v.root.or(m)
	case SecEnvironment:
		v.envs[g.On.Environment] = v.envs[g.On.Environment].or(m)
	case SecNamespace:
		n := v.ns(g.On.Namespace)
		n.here = n.here.or(m)
	case SecPrefix:
		s := v.ns(g.On.Namespace).prefix.descend(g.On.Name)
		s.here = s.here.or(m)
	case SecDataset:
		n := v.ns(g.On.Namespace)
		n.datasets = orInto(n.datasets, g.On.Name, m)
	case SecJob:
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
	for seg := range eachSegment(name) {
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
	for seg := range eachSegment(name) {
		next, ok := cur.children[seg]
		if !ok {
			break
		}
		acc = acc.or(next.here)
		cur = next
	}
	return acc
}

// eachSegment yields the separator-led segments of a name without allocating (the "Name segments" rule in securable.go).
func eachSegment(name string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := 0
		for i := 1; i < len(name); i++ {
			if isSeparator(name[i]) {
				if !yield(name[start:i]) {
					return
				}
				start = i
			}
		}
		if name != "" {
			yield(name[start:])
		}
	}
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
func (v *view) can(priv privSet, c Candidate, envOf EnvironmentOf) bool {
	if c.Namespace == "" {
		return v.table.effective(v.root)&priv != 0 && v.table.implying(v.anyDeny)&priv == 0
	}
	leaf := SecDataset
	if c.Kind == KindJob {
		leaf = SecJob
	}
	return v.eval(envName(envOf, c.Namespace), c.Namespace, c.Name, leaf)&priv != 0
}

// on evaluates a securable itself.
func (v *view) on(s Securable, envOf EnvironmentOf) privSet {
	switch s.Kind {
	case SecRoot:
		return v.table.effective(v.root)
	case SecEnvironment:
		return v.table.effective(v.root.or(v.envs[s.Environment]))
	}
	return v.eval(envName(envOf, s.Namespace), s.Namespace, s.Name, s.Kind)
}

// eval walks root, environment, namespace, name segments and the exact node of kind leaf.
func (v *view) eval(env, ns, name string, leaf SecurableKind) privSet {
	acc, n := v.path(env, ns)
	if n != nil && leaf != SecNamespace {
		acc = acc.or(n.prefix.collect(name))
		switch leaf {
		case SecDataset:
			acc = acc.or(n.datasets[name])
		case SecJob:
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
