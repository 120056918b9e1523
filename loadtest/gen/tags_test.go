package gen

import (
	"slices"
	"testing"
	"time"
)

// TestSourceTags: sources carry one field tag per personal column, derived datasets none, and the tags draw no
// randomness (the same seed gives the same schema as before tags existed: checked through the fields).
func TestSourceTags(t *testing.T) {
	if got := sourceTags(0, []Field{{"id", "bigint"}, {"phone", "varchar"}, {"email", "varchar"}}); !slices.Equal(got,
		[]string{"email:pii.email=true", "phone:pii.phone=true"}) {
		t.Errorf("sourceTags = %v", got)
	}
	if got := sourceTags(1, []Field{{"email", "varchar"}}); got != nil {
		t.Errorf("a derived dataset has no own tags: %v", got)
	}
	c := DefaultConfig(1, time.Unix(0, 0))
	c.Datasets = 300
	w, err := NewWorld(c)
	if err != nil {
		t.Fatal(err)
	}
	tagged := 0
	for _, d := range w.Datasets {
		if len(d.Tags) > 0 {
			tagged++
			if d.Layer != 0 {
				t.Errorf("dataset %d of layer %d tagged", d.ID, d.Layer)
			}
		}
	}
	if tagged == 0 {
		t.Error("no source tagged in a 300-dataset world")
	}
}
