-- The team results every team replay reads: canonical columns, validated (see rejected_team_results).
{{ config(enabled=duckrate._teams_configured()) }}
select source_row, match_id, played_at, team, player, rank, score, league, weight
from {{ ref('stg_team_results_checked') }}
where reason is null
