// Package rules names the refusal rules more than one package writes or reads: the `rule` of a gateway answer
// and of a quarantine record (topic and (:Quarantined) node) that one package sets and another acts on. A rule
// only one package uses is a constant there: the event model's (olevent.Rule*), the identity rules
// (normalize.Rule*; both leaves, so others name them by their constants), the gateway's transport rules.
// Constants only, no imports: any package may use it, graph included.
package rules

// Rules shared between packages. The strings are part of the client contract (error bodies, event(id)).
const (
	// IDConflict: the event's principal already used its id for other content (gateway 409; the projector's
	// Quarantined record; lineage's event(id) answers it QUARANTINED even when the first event was projected).
	IDConflict = "id-conflict"
	// MaxBytes: the request body is larger than the gateway accepts (413). Its quarantine record carries no
	// payload, so redrive skips it.
	MaxBytes = "max-bytes"
	// ProducePermission: the producer may not write a namespace the event changes (gateway 403; the consumer's
	// quarantine record for an external-topic event).
	ProducePermission = "produce-permission"
	// Invalid: the event could not be decoded and the decoder named no rule (gateway and consumer).
	Invalid = "invalid"
)
