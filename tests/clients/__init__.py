"""Real benchmark clients against a local fake server (pytest -m clients)."""
