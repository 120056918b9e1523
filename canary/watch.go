package canary

import (
	"sync"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/inventory/canaries"
)

// watchSet maps the public ids of the nodes each canary's latest check saw to the canaries, and collects the
// canaries to re-check. Bounded: at most canaries.MaxActive canaries of at most MaxWatchedNodes ids each.
type watchSet struct {
	mu      sync.Mutex
	byID    map[string]map[string]bool // node id -> canary names
	ids     map[string][]string        // canary name -> the ids it watches
	pending map[string]bool
	kick    chan struct{} // one wake-up of Run per burst
}

func newWatchSet() *watchSet {
	return &watchSet{byID: map[string]map[string]bool{}, ids: map[string][]string{}, pending: map[string]bool{},
		kick: make(chan struct{}, 1)}
}

// set replaces what canary name watches.
func (w *watchSet) set(name string, ids []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drop(name)
	for _, id := range ids {
		m := w.byID[id]
		if m == nil {
			m = map[string]bool{}
			w.byID[id] = m
		}
		m[name] = true
	}
	w.ids[name] = ids
}

// keepOnly forgets the canaries not in active (retired since).
func (w *watchSet) keepOnly(active []canaries.Canary) {
	keep := make(map[string]bool, len(active))
	for _, k := range active {
		keep[k.Name] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for name := range w.ids {
		if !keep[name] {
			w.drop(name)
		}
	}
}

func (w *watchSet) drop(name string) {
	for _, id := range w.ids[name] {
		if m := w.byID[id]; m != nil {
			delete(m, name)
			if len(m) == 0 {
				delete(w.byID, id)
			}
		}
	}
	delete(w.ids, name)
}

// touched marks the canaries watching one of the node keys (dataset, job or field keys, as the projector
// touches them).
func (w *watchSet) touched(keys []string) {
	w.mu.Lock()
	if len(w.byID) == 0 {
		w.mu.Unlock()
		return
	}
	hit := false
	for _, k := range keys {
		for _, id := range [...]string{api.DatasetID(k), api.JobID(k), api.FieldID(k)} {
			for name := range w.byID[id] {
				w.pending[name], hit = true, true
			}
		}
	}
	w.mu.Unlock()
	if hit {
		w.wake()
	}
}

// mark marks one canary.
func (w *watchSet) mark(name string) {
	w.mu.Lock()
	w.pending[name] = true
	w.mu.Unlock()
	w.wake()
}

func (w *watchSet) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// takePending returns and clears the marked canaries.
func (w *watchSet) takePending() map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.pending
	w.pending = map[string]bool{}
	return p
}
