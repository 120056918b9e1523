package graph_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Packages whose Cypher reads or writes the temporal graph, relative to this one.
var cypherDirs = []string{".", "../ingest/project", "../lineage", "../loadtest/history"}

// Labels of nodes other packages own; graph's migrations name them for their constraints only.
var ownedElsewhere = map[string]string{"ApiToken": "authn", "Role": "authz", "Grant": "authz",
	"RoleBinding": "authz", "GrantEpoch": "authz"}

var (
	labelIn = regexp.MustCompile(`\(\s*\w*\s*:\s*([A-Z][A-Za-z]*)`)
	relIn   = regexp.MustCompile(`\[\s*\w*\s*:\s*([A-Z][A-Z_]*(?:\s*\|\s*:?[A-Z][A-Z_]*)*)`)
)

// model.go lists every label and relationship type the Cypher of the temporal graph names, and every one it
// lists is named by some Cypher: the file is the list of names it claims to be.
func TestModelNamesAreTheCypherNames(t *testing.T) {
	labels, rels := modelNames(t)
	usedLabels, usedRels := map[string]string{}, map[string]string{}
	for _, dir := range cypherDirs {
		for pos, lit := range stringLiterals(t, dir) {
			for _, m := range labelIn.FindAllStringSubmatch(lit, -1) {
				usedLabels[m[1]] = pos
			}
			for _, m := range relIn.FindAllStringSubmatch(lit, -1) {
				for r := range strings.SplitSeq(m[1], "|") {
					usedRels[strings.TrimLeft(strings.TrimSpace(r), ":")] = pos
				}
			}
		}
	}
	for name, pos := range usedLabels {
		if _, other := ownedElsewhere[name]; !other && !slices.Contains(labels, name) {
			t.Errorf("label %s (%s) is not in model.go", name, pos)
		}
	}
	for name, pos := range usedRels {
		if !slices.Contains(rels, name) {
			t.Errorf("relationship type %s (%s) is not in model.go", name, pos)
		}
	}
	for _, l := range labels {
		if _, ok := usedLabels[l]; !ok {
			t.Errorf("model.go lists label %s, which no Cypher names", l)
		}
	}
	for _, r := range rels {
		if _, ok := usedRels[r]; !ok {
			t.Errorf("model.go lists relationship type %s, which no Cypher names", r)
		}
	}
	if len(usedLabels) < 10 || len(usedRels) < 10 {
		t.Fatalf("found %d labels and %d relationship types: the scan is broken", len(usedLabels), len(usedRels))
	}
}

// modelNames are the values of model.go's Label* and Rel* constants.
func modelNames(t *testing.T) (labels, rels []string) {
	f, err := parser.ParseFile(token.NewFileSet(), "model.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Values) != len(vs.Names) {
			return true
		}
		for i, name := range vs.Names {
			lit, ok := vs.Values[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			v, _ := strconv.Unquote(lit.Value)
			switch {
			case strings.HasPrefix(name.Name, "Label"):
				labels = append(labels, v)
			case strings.HasPrefix(name.Name, "Rel"):
				rels = append(rels, v)
			}
		}
		return true
	})
	return labels, rels
}

// stringLiterals are the string literals of a folder's Go files (tests and sub-folders included), by position.
func stringLiterals(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil {
					out[fset.Position(lit.Pos()).String()] = v
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
