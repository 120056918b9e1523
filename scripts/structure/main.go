//go:build ignore

// Command structure prints the package figures issue 15 measures: per Go package of the module, its non-test
// lines, exported identifiers, interfaces and files, the method count of named types, and a summary line. Run it
// through scripts/structure.sh. Standard library only, so it runs on a fresh checkout without a download.
//
// What counts (the method of analysis/structure-review.md §2.1):
//   - code: non-test .go files; generated files (generated.go, *_gen.go) and testdata/, vendor/ and hidden folders
//     are left out. Lines are physical lines of the file, comments and blanks included.
//   - exported: exported top-level funcs, types, vars and consts, plus exported methods of exported types.
//   - interfaces: interface types declared at the top level (any name).
//   - methods of a named type: every method declared with that receiver (exported or not), e.g. lineage.Service.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// pkgFigures are one package's figures.
type pkgFigures struct {
	dir        string
	name       string
	files      int
	lines      int
	exported   int
	interfaces int
	methods    map[string]int // receiver type name -> method count
	types      map[string]bool
}

func main() {
	root := flag.String("root", ".", "module root")
	types := flag.String("types", "lineage.Service,project.txWriter,graph.Store",
		"comma-separated package.Type whose method count to print (package is the last path element)")
	exclude := flag.String("summary-exclude", "loadtest,e2e,scripts",
		"comma-separated top-level folders left out of the second summary line (product code only)")
	flag.Parse()
	pkgs, err := measure(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "structure:", err)
		os.Exit(1)
	}
	printTable(pkgs)
	printTypes(pkgs, strings.Split(*types, ","))
	printSummary("all packages", pkgs)
	printSummary("without "+*exclude, withoutTop(pkgs, strings.Split(*exclude, ",")))
}

// measure walks root and returns the figures of every folder with non-test Go code, sorted by folder.
func measure(root string) ([]*pkgFigures, error) {
	byDir := map[string]*pkgFigures{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return skipDir(path, root, d.Name())
		}
		if !counted(d.Name()) {
			return nil
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		p := byDir[dir]
		if p == nil {
			p = &pkgFigures{dir: dir, methods: map[string]int{}, types: map[string]bool{}}
			byDir[dir] = p
		}
		return p.add(path)
	})
	if err != nil {
		return nil, err
	}
	out := make([]*pkgFigures, 0, len(byDir))
	for _, p := range byDir {
		if p.files > 0 {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out, nil
}

// skipDir leaves out testdata, vendor and hidden folders.
func skipDir(path, root, name string) error {
	if path == root {
		return nil
	}
	if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return filepath.SkipDir
	}
	return nil
}

// counted reports whether a file is non-test, non-generated Go code.
func counted(name string) bool {
	return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") &&
		name != "generated.go" && !strings.HasSuffix(name, "_gen.go")
}

// add parses one file and adds its figures.
func (p *pkgFigures) add(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution|parser.ParseComments)
	if err != nil {
		return err
	}
	if hasBuildIgnore(f) {
		return nil
	}
	p.name = f.Name.Name
	p.files++
	p.lines += strings.Count(string(src), "\n")
	for _, decl := range f.Decls {
		p.addDecl(decl)
	}
	return nil
}

// hasBuildIgnore reports a //go:build ignore file (not part of the package).
func hasBuildIgnore(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build") && strings.Contains(c.Text, "ignore") {
				return true
			}
		}
	}
	return false
}

func (p *pkgFigures) addDecl(decl ast.Decl) {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		p.addFunc(d)
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			p.addSpec(spec)
		}
	}
}

// addFunc counts a function, or a method by its receiver's type name.
func (p *pkgFigures) addFunc(d *ast.FuncDecl) {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		if d.Name.IsExported() {
			p.exported++
		}
		return
	}
	recv := receiverName(d.Recv.List[0].Type)
	p.methods[recv]++
	if d.Name.IsExported() && ast.IsExported(recv) {
		p.exported++
	}
}

func (p *pkgFigures) addSpec(spec ast.Spec) {
	switch s := spec.(type) {
	case *ast.TypeSpec:
		p.types[s.Name.Name] = true
		if s.Name.IsExported() {
			p.exported++
		}
		if _, ok := s.Type.(*ast.InterfaceType); ok {
			p.interfaces++
		}
	case *ast.ValueSpec:
		for _, n := range s.Names {
			if n.IsExported() {
				p.exported++
			}
		}
	}
}

// receiverName is the type name of a receiver expression: T, *T, T[K], *T[K].
func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}

func printTable(pkgs []*pkgFigures) {
	fmt.Printf("%-32s %7s %5s %8s %10s  %s\n", "package", "lines", "files", "exported", "interfaces", "widest type (methods)")
	for _, p := range pkgs {
		typ, n := p.widest()
		fmt.Printf("%-32s %7d %5d %8d %10d  %s\n", p.dir, p.lines, p.files, p.exported, p.interfaces, widestText(typ, n))
	}
}

// widest is the declared type with the most methods (ties: the first name in order).
func (p *pkgFigures) widest() (string, int) {
	best, n := "", 0
	for typ, m := range p.methods {
		if p.types[typ] && (m > n || m == n && typ < best) {
			best, n = typ, m
		}
	}
	return best, n
}

func widestText(typ string, n int) string {
	if typ == "" {
		return "-"
	}
	return fmt.Sprintf("%s (%d)", typ, n)
}

// printTypes prints the method count of each package.Type asked for; "absent" when no package declares it.
func printTypes(pkgs []*pkgFigures, want []string) {
	for _, w := range want {
		pkg, typ, ok := strings.Cut(strings.TrimSpace(w), ".")
		if !ok {
			continue
		}
		found := false
		for _, p := range pkgs {
			if p.name == pkg && p.types[typ] {
				fmt.Printf("methods %s (%s): %d\n", w, p.dir, p.methods[typ])
				found = true
			}
		}
		if !found {
			fmt.Printf("methods %s: absent\n", w)
		}
	}
}

func printSummary(label string, pkgs []*pkgFigures) {
	lines, exported, total := make([]int, 0, len(pkgs)), make([]int, 0, len(pkgs)), 0
	over := []string{}
	for _, p := range pkgs {
		lines, exported, total = append(lines, p.lines), append(exported, p.exported), total+p.lines
		if p.lines > 1500 || p.exported > 40 {
			over = append(over, p.dir)
		}
	}
	fmt.Printf("summary (%s): packages %d, lines %d, median lines %s, median exported %s, over 1500 lines or 40 exported: %s\n",
		label, len(pkgs), total, median(lines), median(exported), strings.Join(over, " "))
}

// median of the values, as the middle one or the mean of the two middle ones.
func median(v []int) string {
	if len(v) == 0 {
		return "-"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return fmt.Sprint(s[n/2])
	}
	m := float64(s[n/2-1]+s[n/2]) / 2
	return fmt.Sprintf("%g", m)
}

// withoutTop drops packages whose first folder is in tops.
func withoutTop(pkgs []*pkgFigures, tops []string) []*pkgFigures {
	var out []*pkgFigures
	for _, p := range pkgs {
		top, _, _ := strings.Cut(filepath.ToSlash(p.dir), "/")
		if !slices.Contains(tops, top) {
			out = append(out, p)
		}
	}
	return out
}
