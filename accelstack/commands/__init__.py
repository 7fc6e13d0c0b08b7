"""CLI commands, one module each, discovered by `accelstack.cli`.

Contract: a module `accelstack/commands/<name>.py` exposes `register(app: typer.Typer) -> None`,
which adds its command(s) to `app` (`@app.command("name")`). `accelstack.cli` imports every module of
this package (pkgutil) and calls `register`; modules without `register` (helpers such as `common`) are
skipped. Shared pieces live in `accelstack.commands.common`: STACK argument resolution
(`resolve_stacks`, `StacksArg`, `AllOpt`, `ProjectDirOpt`, `SetOpt`), loading each stack's spec
with its problems printed (`load_specs`), problem printing (`print_problems`), `@guarded` (user errors
become stderr lines, a returned int the exit code) and exit codes (`EXIT_OK` 0, `EXIT_FAILED` 1,
`EXIT_CONFIG` 2 = bad input/config).
"""
