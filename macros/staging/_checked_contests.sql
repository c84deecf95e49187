{#-
  Every raw contest row mapped onto the canonical columns, with `reason` saying why it cannot be replayed
  (NULL for a good row). Reasons, first failing wins:
    missing_contest_id, missing_player, missing_or_invalid_rank, rank_not_positive,
    missing_or_invalid_played_at, invalid_weight, duplicate_row (an exact copy of an earlier row: one
    copy is kept), player_twice_in_contest (a player listed twice in one contest with different values:
    none is kept), conflicting_played_at / conflicting_weight (the rows of one contest disagree: the
    whole contest is rejected, as the right value cannot be known).
  `source_row` numbers the raw rows deterministically (by the raw values); `raw_row` keeps the raw row.
-#}
{% macro _checked_contests(raw) -%}
  {%- set raw_relation_columns = adapter.get_columns_in_relation(raw) -%}
  {%- set raw_names = raw_relation_columns | map(attribute='name') | list -%}
  {%- set raw_columns = raw_names | map('lower') | list -%}
  {%- set played_at = duckrate._contest_column('played_at', raw_columns) -%}
  {%- set played_at_source = (var('duckrate_contest_columns', {}).get('played_at') or 'played_at') | lower -%}
  {%- set text_columns = raw_relation_columns | selectattr('dtype', 'in', ['VARCHAR', 'TEXT', 'STRING']) | map(attribute='name') | map('lower') | list -%}
with raw as (
    select
        row_number() over (order by {% for name in raw_names %}{{ adapter.quote(name) }}{{ ', ' if not loop.last }}{% else %}1{% endfor %}) as source_row,
        raw as raw_row,
        *
    from {{ raw }} as raw
), mapped as (
    select
        source_row,
        raw_row,
        {{ duckrate._contest_column('contest_id', raw_columns) }} as contest_id,
        {% if played_at_source in text_columns %}try_cast({{ played_at }} as timestamp){% else %}{{ played_at }}{% endif %} as played_at,
        nullif(trim(cast({{ duckrate._contest_column('player', raw_columns) }} as varchar)), '') as player,
        try_cast({{ duckrate._contest_column('rank', raw_columns) }} as bigint) as rank,
        {#- a fractional rank (1.5) would round silently in the cast above: compare with the number given -#}
        try_cast({{ duckrate._contest_column('rank', raw_columns) }} as double) as rank_number,
        cast({{ duckrate._contest_column('league', raw_columns) }} as varchar) as league,
        try_cast({{ duckrate._contest_column('weight', raw_columns) }} as double) as weight,
        {{ duckrate._contest_column('weight', raw_columns) }} is not null as weight_given
    from raw
), flagged as (
    select
        *,
        case
            when contest_id is null then 'missing_contest_id'
            when player is null then 'missing_player'
            when rank is null or rank_number is distinct from rank::double then 'missing_or_invalid_rank'
            when rank < 1 then 'rank_not_positive'
            when played_at is null then 'missing_or_invalid_played_at'
            when weight_given and (weight is null or isnan(weight) or isinf(weight) or weight <= 0) then 'invalid_weight'
        end as row_reason
    from mapped
), keyed as (
    select
        *,
        count(*) over (partition by league, contest_id, player) as rows_with_player,
        count(*) over (partition by league, contest_id, player, played_at, rank, weight) as identical_rows,
        row_number() over (partition by league, contest_id, player, played_at, rank, weight order by source_row) as copy_number,
        count(distinct played_at) over (partition by league, contest_id) as played_at_values,
        count(distinct coalesce(weight, 1.0)) over (partition by league, contest_id) as weight_values
    from flagged
)
select
    keyed.source_row,
    keyed.raw_row,
    coalesce(
        row_reason,
        case
            when rows_with_player > identical_rows then 'player_twice_in_contest'
            when copy_number > 1 then 'duplicate_row'
            when played_at_values > 1 then 'conflicting_played_at'
            when weight_values > 1 then 'conflicting_weight'
        end
    ) as reason,
    keyed.contest_id, keyed.played_at, keyed.player, keyed.rank, keyed.league, keyed.weight
from keyed
{%- endmacro %}
