"""Why a read returns what it does: per file group and column from the executed plan, and
per key for primary-key tables."""
