"""The foundation every package of predictabase stands on: configuration and the shipped project files
(`config`, `resources`), the errors and exit codes (`errors`), file utilities (`fsutil`), failpoints for the fault
tests (`failpoints`), the database transaction (`db`) and the live games' store (`live`).

It imports nothing of the project outside itself (tests/test_package.py checks it): `ingest` stands on it alone,
and the application (`predictabase.cli`, `refresh`, `warehouse`, `orchestrate`, ...) on `ingest` and on it.
"""
