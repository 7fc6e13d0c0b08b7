"""Cloud constraint tables: dated data with their sources, no logic."""
