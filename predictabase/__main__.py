"""`python -m predictabase`: the same as the `predictabase` command."""

from predictabase.cli import main

main()
