"""schemalab: explore and teach table schema evolution."""
