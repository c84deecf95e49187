-- Every system's rating of each player over time, for dashboards: one row per (league, system, player, time
-- step at which the player played). Replays (the systems of var('duckrate_systems')): the rating and sd after
-- the player's last match of the step; whr_fit and ttt_fit: the smoothed value at the step (whr_ratings,
-- ttt_ratings; those of var('duckrate_history_fits')). Steps: var('duckrate_history_period') (null: days), the
-- fits' own. The matches' players only: the team fit's rows are in ttt_team_ratings.
{%- set played_at_type = duckrate._column_type(ref('stg_matches'), 'played_at') %}
{%- set integer_steps = played_at_type is not none and played_at_type | upper in
    ['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT'] %}
with sides as (
    select league, system, seq, played_at, player_a as player, rating_a_after as rating, sd_a_after as sd
    from {{ ref('replays') }}
    union all
    select league, system, seq, played_at, player_b, rating_b_after, sd_b_after
    from {{ ref('replays') }}
), stepped as (
    select *,
        {% if integer_steps -%}
        null::timestamp as period_start, played_at::bigint as step
        {%- else -%}
        date_trunc({{ duckrate._sql_literal(var('duckrate_history_period', none) or 'day') }},
                   {{ duckrate._utc_timestamp('played_at', played_at_type) }}) as period_start, null::bigint as step
        {%- endif %}
    from sides
)
select league, system, player, period_start, step,
    arg_max(rating, seq) as rating, arg_max(sd, seq) as sd, count(*) as games
from stepped
group by league, system, player, period_start, step
{%- for fit in duckrate._history_fits() if fit != 'ttt_team_fit' %}
union all
select league, '{{ fit }}' as system, player, period_start, case when period_start is null then step end as step,
    rating, sd, games
from {{ ref(fit | replace('_fit', '_ratings')) }}
{%- endfor %}
