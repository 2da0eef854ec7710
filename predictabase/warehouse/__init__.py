"""The warehouse: raw-table writers (`raw`), dbt (`dbt`), source freshness (`freshness`), the published
snapshot (`publish`), the writer lock (`lock`) and the dashboard server (`serve`)."""
from predictabase.warehouse.dbt import dbt_args, dbt_build, dbt_env, run_dbt
from predictabase.warehouse.publish import MARTS_SCHEMA, SNAPSHOT_INFO, SNAPSHOT_META, mart_names, publish

__all__ = ["dbt_args", "dbt_build", "dbt_env", "run_dbt", "publish", "mart_names", "MARTS_SCHEMA", "SNAPSHOT_INFO",
           "SNAPSHOT_META"]
