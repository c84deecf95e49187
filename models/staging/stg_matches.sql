-- The matches every replay reads: canonical columns, validated (see rejected_matches for the rest).
select source_row, match_id, played_at, player_a, player_b, score_a, league, weight, period
from {{ ref('stg_matches_checked') }}
where reason is null
