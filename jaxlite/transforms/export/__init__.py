"""`jaxlite.export`'s implementation: `exported` (export, Exported, deserialize) and
`serialization` (the versioned byte format and its pytree node registrations)."""
