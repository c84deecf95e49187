-- The contest results every contest replay reads: canonical columns, validated (see rejected_contest_results).
{{ config(enabled=duckrate._contests_configured()) }}
select source_row, contest_id, played_at, player, rank, league, weight
from {{ ref('stg_contest_results_checked') }}
where reason is null
