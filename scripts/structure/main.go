// Command structure prints, per Go package of the module, the figures issue 15 is judged by: non-generated
// non-test lines, exported identifiers (package-level exported names plus the exported methods of exported types,
// what `go doc -all` lists), interfaces declared, and the exported type with the most methods (all its methods,
// exported or not). Generated files (a "Code generated ... DO NOT EDIT." header) and _test.go files are left out.
// Run it through scripts/structure.sh.
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type pkg struct {
	lines, exported, interfaces int
	methods                     map[string]int // receiver type -> methods
	exportedTypes               map[string]bool
	exportedMethods             map[string]int // receiver type -> exported methods
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated(string(src)) {
			return nil
		}
		dir := filepath.Dir(path)
		p := pkgs[dir]
		if p == nil {
			p = &pkg{methods: map[string]int{}, exportedTypes: map[string]bool{}, exportedMethods: map[string]int{}}
			pkgs[dir] = p
		}
		p.lines += strings.Count(string(src), "\n")
		return count(p, path, src)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dirs := make([]string, 0, len(pkgs))
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	fmt.Printf("%-28s %6s %8s %10s  %s\n", "package", "lines", "exported", "interfaces", "type with most methods")
	for _, d := range dirs {
		p := pkgs[d]
		exported := p.exported
		for t, n := range p.exportedMethods {
			if p.exportedTypes[t] {
				exported += n
			}
		}
		most, n := "", 0
		for t, m := range p.methods {
			if p.exportedTypes[t] && (m > n || (m == n && t < most)) {
				most, n = t, m
			}
		}
		top := ""
		if most != "" {
			top = fmt.Sprintf("%s (%d)", most, n)
		}
		fmt.Printf("%-28s %6d %8d %10d  %s\n", d, p.lines, exported, p.interfaces, top)
	}
}

func generated(src string) bool {
	sc := bufio.NewScanner(strings.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "package ") {
			return false
		}
		if strings.HasPrefix(line, "// Code generated ") && strings.HasSuffix(line, " DO NOT EDIT.") {
			return true
		}
	}
	return false
}

func count(p *pkg, path string, src []byte) error {
	f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
	if err != nil {
		return err
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				if d.Name.IsExported() {
					p.exported++
				}
				continue
			}
			t := recvType(d.Recv.List[0].Type)
			p.methods[t]++
			if d.Name.IsExported() {
				p.exportedMethods[t]++
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if _, ok := s.Type.(*ast.InterfaceType); ok {
						p.interfaces++
					}
					if s.Name.IsExported() {
						p.exported++
						p.exportedTypes[s.Name.Name] = true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							p.exported++
						}
					}
				}
			}
		}
	}
	return nil
}

func recvType(e ast.Expr) string {
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
