"""scantok's scanner compiler: pattern specs + UCD → generated C (run as `python -m gen`)."""
