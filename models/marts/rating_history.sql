{{ config(materialized='duckrate_mart') }}
-- Every system's rating of each player over time, for dashboards: one row per (league, system, player, time
-- step at which the player played). Replays (the systems of var('duckrate_systems')): the rating and sd after
-- the player's last match of the step; whr_fit and ttt_fit: the smoothed value at the step (whr_ratings,
-- ttt_ratings; those of var('duckrate_history_fits')). Steps: var('duckrate_history_period') (null: days), the
-- fits' own. The matches' players only: the team fit's rows are in ttt_team_ratings.
-- One part per replay and per fit (materialized duckrate_mart: built part after part), so each aggregation
-- holds one system's players and steps, not every system's at once.
{%- set played_at_type = duckrate._column_type(ref('stg_matches'), 'played_at') %}
{%- set integer_steps = played_at_type is not none and played_at_type | upper in
    ['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT'] %}
{%- set parts = [] %}
{%- for system in duckrate._systems() %}
  {%- set part %}
select * from (
    with sides as (
        select league, seq, played_at, player_a as player, rating_a_after as rating, sd_a_after as sd
        from {{ ref('replay_' ~ system) }}
        union all
        select league, seq, played_at, player_b, rating_b_after, sd_b_after
        from {{ ref('replay_' ~ system) }}
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
    select league, {{ duckrate._sql_literal(system) }} as system, player, period_start, step,
        arg_max(rating, seq) as rating, arg_max(sd, seq) as sd, count(*) as games
    from stepped
    group by league, player, period_start, step
)
  {%- endset %}
  {%- do parts.append(part) %}
{%- endfor %}
{%- for fit in duckrate._history_fits() if fit != 'ttt_team_fit' %}
  {%- set part %}
select league, {{ duckrate._sql_literal(fit) }} as system, player, period_start,
    case when period_start is null then step end as step, rating, sd, games
from {{ ref(fit | replace('_fit', '_ratings')) }}
  {%- endset %}
  {%- do parts.append(part) %}
{%- endfor %}
{{ parts | join(duckrate._mart_part_separator()) }}
