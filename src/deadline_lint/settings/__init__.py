"""The adoption profile: every setting described once, loaded, validated, and turned into a JSON
Schema."""
