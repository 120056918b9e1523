package olevent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Event id prefixes. A deterministic id is "sha256:" + hex(sha256(canonical JSON of the event)). A producer id
// longer than MaxEventIDBytes is replaced by "sha256-id:" + hex(sha256(id)) so ids stay bounded.
const (
	DeterministicIDPrefix = "sha256:"
	HashedIDPrefix        = "sha256-id:"
)

// ResolveID sets ev.ID: the header id (Idempotency-Key / X-Event-Id) if not blank, else the envelope eventId,
// else the deterministic id over the canonical event (see docs/adr/0004-event-identity.md).
func ResolveID(headerID string, ev *Event) {
	for _, id := range []string{headerID, ev.EnvelopeID} {
		if id = strings.TrimSpace(id); id != "" {
			ev.ID = boundID(id)
			return
		}
	}
	if ev.contentID != "" {
		ev.ID = ev.contentID
		return
	}
	ev.ID = DeterministicID(ev.Raw)
}

// DocumentID is DeterministicID over an already parsed document (json.Number numbers), saving the decoder a
// re-parse.
func DocumentID(doc any) string {
	var b bytes.Buffer
	if err := writeCanonical(&b, doc); err != nil {
		return ""
	}
	return CanonicalID(b.Bytes())
}

// CanonicalID is the deterministic id of the event whose canonical JSON is c.
func CanonicalID(c []byte) string {
	sum := sha256.Sum256(c)
	return DeterministicIDPrefix + hex.EncodeToString(sum[:])
}

// DeterministicID is the id of an event that brought none: the sha256 of its canonical JSON. Bytes that are
// not JSON (never the case after Decode) are hashed as they are.
func DeterministicID(raw []byte) string {
	c, err := canonicalJSON(raw)
	if err != nil {
		c = raw
	}
	sum := sha256.Sum256(c)
	return DeterministicIDPrefix + hex.EncodeToString(sum[:])
}

func boundID(id string) string {
	if len(id) <= MaxEventIDBytes {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return HashedIDPrefix + hex.EncodeToString(sum[:])
}

// PartitionKey is the Kafka message key, as the OpenLineage Kafka transport forms it, so that all events of a
// run tree land in one partition: RunEvents "run:{root job ns}/{name}", else the parent job, else the job;
// JobEvents "job:{ns}/{name}"; DatasetEvents "dataset:{ns}/{name}".
func PartitionKey(ev *Event) string {
	switch {
	case ev.Kind == KindDataset && ev.Dataset != nil:
		return "dataset:" + ev.Dataset.Namespace + "/" + ev.Dataset.Name
	case ev.Kind == KindJob && ev.Job != nil:
		return "job:" + ev.Job.Namespace + "/" + ev.Job.Name
	case ev.Run != nil && ev.Run.Root != nil:
		return "run:" + ev.Run.Root.JobNamespace + "/" + ev.Run.Root.JobName
	case ev.Run != nil && ev.Run.Parent != nil:
		return "run:" + ev.Run.Parent.JobNamespace + "/" + ev.Run.Parent.JobName
	case ev.Job != nil:
		return "run:" + ev.Job.Namespace + "/" + ev.Job.Name
	}
	return ""
}

// ContentDigest is the sha256 of the event's canonical JSON (the deterministic id, whatever id the event was
// given): two events under one id with different digests are different events. "" for a hand-built event with
// no raw bytes.
func (ev *Event) ContentDigest() string {
	if ev.contentID != "" {
		return ev.contentID
	}
	if len(ev.Raw) == 0 {
		return ""
	}
	return DeterministicID(ev.Raw)
}

// SetContentDigest records a digest computed earlier (by the gateway, carried in a Kafka header) so that
// ContentDigest need not canonicalise the event again.
func (ev *Event) SetContentDigest(d string) {
	if ev.contentID == "" {
		ev.contentID = d
	}
}
