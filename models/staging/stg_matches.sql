-- The matches every replay reads: canonical columns, validated (see rejected_matches for the rest), plus the
-- raw columns var('duckrate_bt_params') names as covariates or cluster (for bt_ratings).
select source_row, match_id, played_at, player_a, player_b, score_a, league, weight, period
{%- for name in duckrate._bt_extra_columns() %},
    raw_row[{{ duckrate._sql_literal(name) }}] as {{ adapter.quote(name) }}
{%- endfor %}
from {{ ref('stg_matches_checked') }}
where reason is null
