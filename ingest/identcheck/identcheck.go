// Package identcheck refuses, before an event is made durable, every identity the projector could not bind: it
// canonicalises each dataset and job reference an event makes (inputs, outputs, a DatasetEvent's dataset, symlinks,
// a RENAME's previousIdentifier, column-lineage and lineage-facet inputs, the parent and root jobs) and checks every
// field path (schema facet, column lineage) with the rules of package normalize, the same the projector runs.
//
// Invariant: an event Decoder accepts is projected with every identity it names bound (DESIGN.md "What the gateway
// accepts (2xx) it projects"). The gateway and the consumer (for events that arrive on external topics or are
// re-driven) use the same Decoder, so both refuse the same events with the same field and rule.
package identcheck

import (
	"errors"
	"fmt"
	"sort"

	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// Canonicalizer canonicalises identities as projection does (normalize.Normalizer).
type Canonicalizer interface {
	Dataset(namespace, name string) (env, ns, nm string, err error)
	Job(namespace, name string) (ns, nm string, err error)
}

// Inner is the event decoder the check wraps (decode.Decoder).
type Inner interface {
	Decode(raw []byte) (olevent.Event, error)
	DecodeValidated(raw []byte) (olevent.Event, error)
}

// Decoder decodes with Inner and then refuses events naming an identity or field that cannot be canonicalised.
type Decoder struct {
	inner Inner
	canon Canonicalizer
}

// New wraps inner.
func New(inner Inner, canon Canonicalizer) *Decoder { return &Decoder{inner: inner, canon: canon} }

// Decode decodes raw and checks its identities; the error is a *olevent.ValidationError naming the field and rule.
func (d *Decoder) Decode(raw []byte) (olevent.Event, error) {
	ev, err := d.inner.Decode(raw)
	if err != nil {
		return ev, err
	}
	if ve := Check(d.canon, &ev); ve != nil {
		return olevent.Event{}, ve
	}
	return ev, nil
}

// DecodeValidated decodes an event the gateway produced, which passed Decode there: it is not checked again.
func (d *Decoder) DecodeValidated(raw []byte) (olevent.Event, error) {
	return d.inner.DecodeValidated(raw)
}

// Check returns the first identity or field path of ev that cannot be canonicalised, as a validation error whose
// field is the path of the offending value ("outputs[0].name", "run.facets.parent.job.namespace").
func Check(canon Canonicalizer, ev *olevent.Event) *olevent.ValidationError {
	c := checker{canon: canon}
	if ev.Job != nil {
		c.job("job", ev.Job.Namespace, ev.Job.Name)
	}
	if ev.Run != nil {
		c.parent("run.facets.parent", ev.Run.Parent)
		c.parent("run.facets.parent.root", ev.Run.Root)
	}
	for i := range ev.Inputs {
		c.datasetRec(fmt.Sprintf("inputs[%d]", i), &ev.Inputs[i])
	}
	for i := range ev.Outputs {
		c.datasetRec(fmt.Sprintf("outputs[%d]", i), &ev.Outputs[i])
	}
	if ev.Dataset != nil {
		c.datasetRec("dataset", ev.Dataset)
	}
	return c.first
}

// checker remembers the first failure; later checks are skipped.
type checker struct {
	canon Canonicalizer
	first *olevent.ValidationError
}

func (c *checker) fail(path string, err error) {
	if c.first != nil || err == nil {
		return
	}
	var ie *normalize.IdentityError
	if !errors.As(err, &ie) {
		c.first = &olevent.ValidationError{Field: path, Rule: "identity", Message: path + ": " + err.Error()}
		return
	}
	field := path
	if ie.Part != normalize.PartField {
		field = path + "." + ie.Part
	}
	c.first = &olevent.ValidationError{Field: field, Rule: ie.Rule, Message: field + ": " + ie.Error()}
}

func (c *checker) job(path, ns, name string) {
	if c.first == nil {
		_, _, err := c.canon.Job(ns, name)
		c.fail(path, err)
	}
}

func (c *checker) dataset(path, ns, name string) {
	if c.first == nil {
		_, _, _, err := c.canon.Dataset(ns, name)
		c.fail(path, err)
	}
}

func (c *checker) field(path, name string) {
	if c.first == nil {
		c.fail(path, normalize.Field(name))
	}
}

// parent checks a parent or root run's job; the projector links the run to it.
func (c *checker) parent(path string, p *olevent.ParentRef) {
	if p != nil && p.RunID != "" {
		c.job(path+".job", p.JobNamespace, p.JobName)
	}
}

// datasetRec checks one dataset of the event and every identity and field its interpreted facets name.
func (c *checker) datasetRec(path string, d *olevent.Dataset) {
	facets := path + ".facets"
	mt := d.MetadataTable // an Iceberg metadata table is named by one of the symlinks it was sent with (ADR 0025)
	if mt != nil {
		c.dataset(fmt.Sprintf("%s.symlinks.identifiers[%d]", facets, mt.Symlink), d.Namespace, d.Name)
	} else {
		c.dataset(path, d.Namespace, d.Name)
	}
	for _, f := range d.Schema {
		c.field(facets+".schema.fields", f.Path)
	}
	for i, s := range d.Symlinks {
		sent := i
		if mt != nil && i >= mt.Symlink {
			sent++
		}
		c.dataset(fmt.Sprintf("%s.symlinks.identifiers[%d]", facets, sent), s.Namespace, s.Name)
	}
	if lc := d.Lifecycle; lc != nil && lc.PreviousIdentifier != nil {
		c.dataset(facets+".lifecycleStateChange.previousIdentifier", lc.PreviousIdentifier.Namespace, lc.PreviousIdentifier.Name)
	}
	if cl := d.ColumnLineage; cl != nil {
		c.columnFields(facets+".columnLineage.fields", cl.Fields, "inputFields", true)
		c.inputFields(facets+".columnLineage.dataset", cl.Dataset, true)
	}
	if lf := d.Lineage; lf != nil {
		c.lineageInputs(facets+".lineage.inputs", lf.AllInputs)
		// The facet keeps only the DATASET inputs of a field entry, so their positions are not the sent ones.
		c.columnFields(facets+".lineage.fields", lf.Fields, "inputs", false)
	}
}

// columnFields checks each output field and its inputs, in key order so the first failure is deterministic.
func (c *checker) columnFields(path string, fields map[string][]olevent.InputField, list string, indexed bool) {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c.field(path, k)
		c.inputFields(path+"."+k+"."+list, fields[k], indexed)
	}
}

func (c *checker) inputFields(path string, ins []olevent.InputField, indexed bool) {
	for i, in := range ins {
		p := path
		if indexed {
			p = fmt.Sprintf("%s[%d]", path, i)
		}
		c.dataset(p, in.Namespace, in.Name)
		c.field(p+".field", in.Field)
	}
}

// lineageInputs checks the DATASET inputs of a lineage facet; JOB inputs are not projected.
func (c *checker) lineageInputs(path string, ins []olevent.LineageInput) {
	for i, in := range ins {
		if in.Type != olevent.EntityDataset {
			continue
		}
		p := fmt.Sprintf("%s[%d]", path, i)
		c.dataset(p, in.Namespace, in.Name)
		if in.Field != "" {
			c.field(p+".field", in.Field)
		}
	}
}
