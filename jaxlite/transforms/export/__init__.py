"""`jaxlite.export`'s implementation: `exported` (export, Exported, deserialize),
`serialization` (the versioned byte format and its pytree node registrations) and
`shape_refinement` (calling a shape-polymorphic Exported at concrete sizes)."""
