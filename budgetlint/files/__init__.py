"""Files: discovery, safe reading, YAML with positions, JSON Schema validation."""


class InputError(Exception):
    """Input that could not be read at all (exit code 2)."""
