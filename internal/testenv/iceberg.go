package testenv

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// IcebergURI is the Iceberg REST catalog fixture's base URI (scripts/stack/stack.sh, HEADWATER_ICEBERG_PORT).
func IcebergURI() string { return Env("HEADWATER_ICEBERG_URI", "http://127.0.0.1:8281") }

// PyIceberg returns the interpreter of the pyiceberg venv (scripts/producers/pyiceberg.sh prints its home;
// `make test` passes it as HEADWATER_TEST_PYICEBERG). A missing venv fails the test, saying how to build it.
func PyIceberg(t testing.TB) string {
	t.Helper()
	Servers(t)
	home := Env("HEADWATER_TEST_PYICEBERG", "")
	if home == "" {
		t.Fatal("HEADWATER_TEST_PYICEBERG is not set; run HEADWATER_TEST_PYICEBERG=$(scripts/producers/pyiceberg.sh) go test ... (or `make test`)")
	}
	py := filepath.Join(home, "venv", "bin", "python")
	if _, err := exec.LookPath(py); err != nil {
		t.Fatalf("pyiceberg interpreter %s: %v; run scripts/producers/pyiceberg.sh", py, err)
	}
	return py
}
