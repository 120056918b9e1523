package graph

// CompareSchemaForTest exposes compareSchema to the external test package.
var CompareSchemaForTest = compareSchema

// InForceCypherForTest exposes the Cypher in-force predicate over variable v.
var InForceCypherForTest = InForceCypher
