package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// canaryCmd registers and retires canaries (known paths) with a running headwater (docs/trust.md, ADR 0032).
type canaryCmd struct {
	Register canaryRegisterCmd `cmd:"" help:"Register (or replace) a canary from a JSON file {from, to, job, transformation}."`
	Retire   canaryRetireCmd   `cmd:"" help:"Retire a canary."`
}

type canaryConn struct {
	URL     string        `help:"Headwater base URL." default:"http://127.0.0.1:8080" env:"HEADWATER_URL"`
	Token   string        `help:"API token (needs MANAGE_INVENTORY on the canary's namespaces)." env:"HEADWATER_TOKEN" secret:"true"`
	Name    string        `help:"Canary name." required:""`
	Timeout time.Duration `help:"Time for the request." default:"30s"`
}

type canaryRegisterCmd struct {
	canaryConn
	File string `help:"The canary as JSON ({\"from\": {\"namespace\", \"name\", \"field\"}, \"to\": {...}, \"job\": {\"namespace\", \"name\"}, \"transformation\": \"DIRECT\"}; - for standard input)." required:""`
}

type canaryRetireCmd struct{ canaryConn }

func (c canaryRegisterCmd) Run(rc *runCtx) error {
	in, err := openInput(c.File)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read-only: nothing to lose
	body, err := io.ReadAll(io.LimitReader(in, 1<<20))
	if err != nil {
		return err
	}
	return c.do(rc, http.MethodPut, body)
}

func (c canaryRetireCmd) Run(rc *runCtx) error { return c.do(rc, http.MethodDelete, nil) }

func (c canaryConn) do(rc *runCtx, method string, body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
	defer cancel()
	target := strings.TrimRight(c.URL, "/") + "/api/v1/canaries/" + url.PathEscape(c.Name)
	b, err := apiCall(ctx, "canary "+strings.ToLower(method), method, target, c.Token, bytes.NewReader(body),
		map[string]string{"Content-Type": "application/json"}, 1<<20)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(rc.stdout, strings.TrimSpace(string(b)))
	return err
}
