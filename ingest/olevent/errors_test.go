package olevent

import (
	"strings"
	"testing"
)

func TestErrorStrings(t *testing.T) {
	ve := &ValidationError{Field: "run.runId", Rule: RuleUUID, Message: "run.runId must be a UUID"}
	if s := ve.Error(); !strings.Contains(s, "run.runId") || !strings.Contains(s, RuleUUID) {
		t.Errorf("ValidationError.Error() = %q", s)
	}
	le := &InvalidLimitsError{Limit: "MaxDatasets", Reason: "must be positive"}
	if s := le.Error(); !strings.Contains(s, "MaxDatasets") {
		t.Errorf("InvalidLimitsError.Error() = %q", s)
	}
}
