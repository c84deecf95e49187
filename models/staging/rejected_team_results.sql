-- Raw team results rows that cannot be replayed: source_row, the reason, and the raw columns as they came.
{{ config(enabled=duckrate._teams_configured()) }}
select source_row, reason, unnest(raw_row)
from {{ ref('stg_team_results_checked') }}
where reason is not null
