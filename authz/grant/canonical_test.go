package grant

import (
	"errors"
	"testing"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/normalize"
)

func TestCanonicalSecurableMatchesEventIdentities(t *testing.T) {
	norm, err := normalize.New(normalize.Config{DefaultEnv: "default"})
	if err != nil {
		t.Fatal(err)
	}
	_, evNS, evName, err := norm.Dataset("postgres://WH:5432/", "analytics.finance.orders")
	if err != nil {
		t.Fatal(err)
	}
	s, err := CanonicalSecurable(norm, Securable{Kind: SecPrefix, Namespace: "POSTGRES://wh:5432/", Name: "analytics.finance."})
	if err != nil {
		t.Fatal(err)
	}
	if s.Namespace != evNS || !PrefixCovers(s.Name, evName) {
		t.Errorf("canonical securable %+v does not cover the event identity %s %s", s, evNS, evName)
	}
	j, err := CanonicalSecurable(norm, Securable{Kind: SecNamespace, Namespace: "airflow-prod/"})
	if err != nil || j.Namespace != "airflow-prod" || j.Name != "" {
		t.Errorf("job namespace: %+v, %v", j, err)
	}
	if _, err := CanonicalSecurable(norm, Securable{Kind: SecDataset, Namespace: "postgres://", Name: "x"}); !errors.Is(err, authz.ErrInvalid) {
		t.Errorf("uncanonicalisable namespace: %v, want ErrInvalid", err)
	}
}
