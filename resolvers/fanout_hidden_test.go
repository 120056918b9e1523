package resolvers

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/headwater-data/headwater/authz"
)

// TestFanOutWindowSkipsHiddenNeighbours: dataset hops read only the first fanOut+1 neighbours of a node in key
// order; when neighbours the caller may not see take places in that window, the hop must read the node again in
// full so the page still shows fanOut visible neighbours, and paging still reaches every visible one. A hub with
// ten hidden and three visible outputs, fan-out 2, as the narrow principal, in both hidden-neighbour modes.
func TestFanOutWindowSkipsHiddenNeighbours(t *testing.T) {
	for _, mode := range []authz.HiddenMode{authz.HiddenOmit, authz.HiddenRedact} {
		t.Run(string(mode), func(t *testing.T) {
			w := newWorld(t, worldOpt{mode: mode, fanOut: 2})
			fx := w.fx
			outs := []string{}
			for i := range 10 {
				outs = append(outs, fx.Dataset(w.hidden(fmt.Sprintf("fo%d", i))))
			}
			visible := []string{"pub.fo1", "pub.fo2", "pub.fo3"}
			for _, n := range visible {
				outs = append(outs, fx.Dataset(n))
			}
			fx.Flow(fx.Job("pub.jf"), []string{fx.Dataset("pub.fan")}, outs)
			vars := map[string]any{"ns": fx.NS, "name": "pub.fan", "dir": "DOWNSTREAM", "depth": 1, "gran": "DATASET"}
			var got []string
			for page := 0; ; page++ {
				if page == 5 {
					t.Fatal("pages did not end")
				}
				body := w.post(w.narrow, leakLineageQ, vars)
				w.noLeak("fan-out page", body)
				var r struct {
					Data struct {
						Lineage struct {
							Nodes []struct {
								Typename string `json:"__typename"`
								Name     string `json:"name"`
							}
							Cursor        *string
							FanOutMarkers []struct{ Shown int } `json:"fanOutMarkers"`
						}
					}
				}
				if err := json.Unmarshal(body, &r); err != nil {
					t.Fatal(err)
				}
				l := r.Data.Lineage
				shown := 0
				for _, n := range l.Nodes {
					if n.Typename == "Dataset" && n.Name != "pub.fan" {
						got = append(got, n.Name)
						shown++
					}
				}
				if page == 0 && (shown != 2 || len(l.FanOutMarkers) != 1 || l.FanOutMarkers[0].Shown != 2) {
					t.Fatalf("first page: %d visible neighbours, markers %+v, want 2 and one marker at 2: %s",
						shown, l.FanOutMarkers, body)
				}
				if l.Cursor == nil {
					break
				}
				vars["after"] = *l.Cursor
			}
			slices.Sort(got)
			if !slices.Equal(got, visible) {
				t.Fatalf("pages showed %v, want exactly the visible outputs %v", got, visible)
			}
		})
	}
}
