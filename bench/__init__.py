"""BeamClaw benchmark harness (``make bench``). See bench/__main__.py."""
