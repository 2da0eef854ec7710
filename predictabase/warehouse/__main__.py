"""`python -m predictabase.warehouse`: the declarations the dbt project reads (PREDICTABASE_DECLARATIONS), as
JSON, for running dbt by hand (dbt_project/README.md)."""
import json

from predictabase.warehouse.dbt import declarations

print(json.dumps(declarations(), sort_keys=True))
