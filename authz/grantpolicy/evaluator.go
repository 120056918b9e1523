package grantpolicy

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
)

// maxCachedViews bounds the compiled per-role-set views one Evaluator keeps; past it, views are compiled per
// call (correct, slower).
const maxCachedViews = 10_000

// EnvironmentOf maps a canonical namespace to its environment (the identity configuration's namespace map).
type EnvironmentOf func(namespace string) string

// Evaluator is the grant state of one epoch compiled for cheap checks: each principal's effective role set is
// compiled once into a trie (environment -> namespace -> name segments -> exact dataset/job) holding allow and
// deny masks, so a check costs a few map lookups and no round trip. It is immutable but for its view cache and
// safe for concurrent use.
type Evaluator struct {
	epoch    int64
	table    privTable
	roles    map[string]bool
	grants   map[string][]grant.Grant // role -> grants
	bindings map[string][]string      // subject -> roles
	envOf    EnvironmentOf
	settings authz.Settings
	setHash  string

	mu    sync.Mutex
	views map[string]*view
}

// NewEvaluator compiles a snapshot. envOf may be nil (then ENVIRONMENT grants match nothing).
func NewEvaluator(s grant.Snapshot, settings authz.Settings, envOf EnvironmentOf) *Evaluator {
	e := &Evaluator{epoch: s.Epoch, table: newPrivTable(), roles: map[string]bool{}, grants: map[string][]grant.Grant{},
		bindings: map[string][]string{}, envOf: envOf, settings: settings.Normalized(), views: map[string]*view{}}
	e.setHash = settingsHash(e.settings)
	for _, r := range s.Roles {
		e.roles[r.Name] = true
	}
	for _, g := range s.Grants {
		if g.Validate() == nil {
			e.grants[g.Role] = append(e.grants[g.Role], g.Normalized())
		}
	}
	for _, b := range s.Bindings {
		e.bindings[b.Subject] = append(e.bindings[b.Subject], b.Role)
	}
	return e
}

// Grants returns the grants of a role (normalized), in the order the snapshot listed them.
func (e *Evaluator) Grants(role string) []grant.Grant { return slices.Clone(e.grants[role]) }

// Epoch is the grant epoch the evaluator was compiled from.
func (e *Evaluator) Epoch() int64 { return e.epoch }

// Settings are the policy-wide settings the evaluator was compiled with.
func (e *Evaluator) Settings() authz.Settings { return e.settings }

// RolesOf returns the effective roles of a principal: its bindings plus the claimed roles (from its token) that
// exist, sorted and unique.
func (e *Evaluator) RolesOf(p authz.Principal, claimed []string) []string {
	var out []string
	for _, r := range append(slices.Clone(e.bindings[p.Subject]), claimed...) {
		if e.roles[r] {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (e *Evaluator) viewOf(p authz.Principal, claimed []string) *view {
	roles := e.RolesOf(p, claimed)
	key := strings.Join(roles, "\x00")
	if p.Restricted() {
		key += "\x01" + p.Restrict
	}
	e.mu.Lock()
	v, ok := e.views[key]
	e.mu.Unlock()
	if ok {
		return v
	}
	v = e.compile(roles)
	if p.Restricted() {
		v = e.restrict(v, p.RestrictedTo())
	}
	e.mu.Lock()
	if len(e.views) < maxCachedViews {
		e.views[key] = v
	}
	e.mu.Unlock()
	return v
}

// Can answers whether a principal (with the roles its token claims) holds priv on a candidate node.
func (e *Evaluator) Can(p authz.Principal, claimed []string, priv authz.Privilege, c authz.Candidate) bool {
	return e.viewOf(p, claimed).can(bit(priv), c, e.envOf)
}

// CanOn answers whether a principal holds priv on a securable itself (for MANAGE_GRANTS and PRODUCE checks).
func (e *Evaluator) CanOn(p authz.Principal, claimed []string, priv authz.Privilege, s grant.Securable) bool {
	return e.viewOf(p, claimed).on(s.Normalized(), e.envOf)&bit(priv) != 0
}

// CoversNamespace answers whether a principal holds priv on everything in namespace ns, now and later (nothing
// beneath the namespace denies it).
func (e *Evaluator) CoversNamespace(p authz.Principal, claimed []string, priv authz.Privilege, ns string) bool {
	return ns != "" && e.viewOf(p, claimed).covers(bit(priv), envName(e.envOf, ns), ns)
}

// Scope returns the principal's scope: a fingerprint of its effective grants, the epoch and the settings, and
// whether it may describe everything.
func (e *Evaluator) Scope(p authz.Principal, claimed []string) authz.Scope {
	v := e.viewOf(p, claimed)
	return authz.Scope{Fingerprint: v.fingerprint, Global: v.global}
}

func (e *Evaluator) compile(roles []string) *view {
	v := &view{table: &e.table, envs: map[string]masks{}, nss: map[string]*nsNode{}}
	var lines []string
	for _, r := range roles {
		for _, g := range e.grants[r] {
			v.add(g)
			lines = append(lines, scopeLine(g))
		}
	}
	slices.Sort(lines)
	lines = slices.Compact(lines)
	v.fingerprint = fingerprint(e.epoch, e.setHash, lines)
	describe := bit(authz.PrivDescribe)
	v.global = e.table.effective(v.root)&describe != 0 && e.table.implying(v.anyDeny)&describe == 0
	return v
}

// restrict is the view of a restricted principal (an exchanged token, ADR 0051): PRODUCE on each of namespaces
// that the full view allows there, and nothing else: no DESCRIBE, LIST or lineage anywhere, no PRODUCE beyond
// the namespaces. Every check of the policy goes through a view, so the restriction holds for all of them.
func (e *Evaluator) restrict(full *view, namespaces []string) *view {
	v := &view{table: &e.table, envs: map[string]masks{}, nss: map[string]*nsNode{}}
	lines := []string{"restricted"}
	for _, ns := range namespaces {
		if full.on(grant.Securable{Kind: grant.SecNamespace, Namespace: ns}, e.envOf)&bit(authz.PrivProduce) == 0 {
			continue
		}
		g := grant.Grant{Effect: grant.Allow, Privilege: authz.PrivProduce, On: grant.Securable{Kind: grant.SecNamespace, Namespace: ns}}
		v.add(g)
		lines = append(lines, scopeLine(g))
	}
	v.fingerprint = fingerprint(e.epoch, e.setHash, lines)
	return v
}

// scopeLine is the canonical text of what a (normalized) grant gives, without the role: two principals holding
// the same grants through different roles have the same scope.
func scopeLine(g grant.Grant) string {
	return string(g.Effect) + " " + string(g.Privilege) + " ON " + g.On.String()
}

// settingsHash is the settings' part of every scope fingerprint.
func settingsHash(s authz.Settings) string {
	return string(s.HiddenNeighbours) + "|" + strings.Join(s.SensitiveNamespaces, "\x1f") + "|" +
		strings.Join(s.SensitiveTags, "\x1f")
}

// fingerprintVersion changes when the fingerprint's input changes meaning.
const fingerprintVersion = "hw-scope-v1"

func fingerprint(epoch int64, settings string, lines []string) string {
	h := sha256.New()
	h.Write([]byte(fingerprintVersion + "\n" + strconv.FormatInt(epoch, 10) + "\n" + settings + "\n"))
	for _, l := range lines {
		h.Write([]byte(l + "\n"))
	}
	return "g" + hex.EncodeToString(h.Sum(nil)[:16])
}
