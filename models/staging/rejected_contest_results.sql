-- Raw contest rows that cannot be replayed: source_row, the reason, and the raw columns as they came.
{{ config(enabled=duckrate._contests_configured()) }}
select source_row, reason, unnest(raw_row)
from {{ ref('stg_contest_results_checked') }}
where reason is not null
