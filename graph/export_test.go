package graph

// CompareSchemaForTest exposes compareSchema to the external test package.
var CompareSchemaForTest = compareSchema
