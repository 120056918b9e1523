package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/headwater-data/headwater/loadtest/machine"
	"github.com/headwater-data/headwater/loadtest/report"
)

// OutputFlags say where results go.
type OutputFlags struct {
	Out    string `help:"Result JSON path (markdown and charts go next to it)." default:"loadtest-result.json"`
	Charts bool   `help:"Also write PNG charts and a markdown report next to the JSON." default:"true" negatable:""`
}

// finish stamps the machine, writes the JSON, then the markdown and charts.
func (o OutputFlags) finish(e *env, r report.Result) error {
	r.Machine = machine.Describe()
	if err := report.Write(o.Out, r); err != nil {
		return err
	}
	e.log.Info("result written", "path", o.Out)
	if !o.Charts {
		return nil
	}
	return render(e, r, o.Out)
}

func render(e *env, r report.Result, jsonPath string) error {
	dir := filepath.Dir(jsonPath)
	md := jsonPath[:len(jsonPath)-len(filepath.Ext(jsonPath))] + ".md"
	if err := os.WriteFile(md, []byte(report.Markdown(r)), 0o644); err != nil {
		return fmt.Errorf("write markdown: %w", err)
	}
	stem := filepath.Base(md[:len(md)-len(".md")])
	charts, err := report.Charts(r, dir, stem)
	if err != nil {
		return err
	}
	e.log.Info("report written", "markdown", md, "charts", charts)
	return nil
}

// ReportCmd renders an existing result.
type ReportCmd struct {
	In string `arg:"" help:"Result JSON file." type:"existingfile"`
}

// Run renders markdown and charts next to the input.
func (c *ReportCmd) Run(e *env) error {
	r, err := report.Read(c.In)
	if err != nil {
		return err
	}
	fmt.Print(report.Markdown(r))
	return render(e, r, c.In)
}
