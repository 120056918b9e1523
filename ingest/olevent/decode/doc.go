// Package decode validates and decodes one OpenLineage event in a single pass (ADR 0037): one strict parse
// (ingest/olevent/jsontree: syntax, depth, string size, UTF-8, duplicate keys) into a tree; the envelope checks
// and the JSON Schema (santhosh-tekuri/jsonschema) on that tree; the canonical content id from it; the envelope and
// the interpreted facets (ingest/olevent/facets) read from it. A refused event's field and rule are named by the
// token walk (scanner) that was the only check before. DecodeValidated is the consumer's path for events the
// gateway validated: the same parse and build without the checks.
package decode
