"""Programs that run ON a serving replica (not Pulumi code): shipped verbatim in its user data."""
