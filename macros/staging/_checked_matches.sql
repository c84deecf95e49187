{#-
  Every raw row mapped onto the canonical columns, with `reason` saying why it cannot be replayed
  (NULL for a good row). Reasons, first failing wins:
    missing_match_id, missing_player_a, missing_player_b, self_match, missing_or_invalid_score,
    score_out_of_range, missing_or_invalid_played_at, invalid_weight, invalid_period,
    duplicate_row (an exact copy of an earlier row: one copy is kept), and
    conflicting_match_id (rows sharing a match_id but differing elsewhere: none is kept, as the
    right one cannot be known).
  A copy is the later of two rows equal in every canonical column (sorted by content, then source_row,
  copies sit side by side); a match_id conflicts when its rows' contents are not all equal.
  `source_row` numbers the raw rows deterministically (by the raw values), so reruns agree;
  `raw_row` keeps the raw row as it came (a struct) for rejected_matches.
-#}
{% macro _checked_matches(raw) -%}
  {%- set raw_relation_columns = adapter.get_columns_in_relation(raw) -%}
  {%- set raw_names = raw_relation_columns | map(attribute='name') | list -%}
  {%- set raw_columns = raw_names | map('lower') | list -%}
  {%- set played_at = duckrate._match_column('played_at', raw_columns) -%}
  {%- set played_at_source = (var('duckrate_match_columns', {}).get('played_at') or 'played_at') | lower -%}
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
        {{ duckrate._match_column('match_id', raw_columns) }} as match_id,
        {#- played_at keeps its type (TIMESTAMP, DATE or integer order); a text column is parsed as a timestamp -#}
        {% if played_at_source in text_columns %}try_cast({{ played_at }} as timestamp){% else %}{{ played_at }}{% endif %} as played_at,
        nullif(trim(cast({{ duckrate._match_column('player_a', raw_columns) }} as varchar)), '') as player_a,
        nullif(trim(cast({{ duckrate._match_column('player_b', raw_columns) }} as varchar)), '') as player_b,
        try_cast({{ duckrate._match_column('score_a', raw_columns) }} as double) as score_a,
        cast({{ duckrate._match_column('league', raw_columns) }} as varchar) as league,
        try_cast({{ duckrate._match_column('weight', raw_columns) }} as double) as weight,
        try_cast({{ duckrate._match_column('period', raw_columns) }} as bigint) as period,
        {{ duckrate._match_column('weight', raw_columns) }} is not null as weight_given,
        {{ duckrate._match_column('period', raw_columns) }} is not null as period_given,
        {#- a fractional period (2.5) would round silently in the cast above: compare with the number given -#}
        try_cast({{ duckrate._match_column('period', raw_columns) }} as double) as period_number
    from raw
), flagged as (
    select
        *,
        case
            when match_id is null then 'missing_match_id'
            when player_a is null then 'missing_player_a'
            when player_b is null then 'missing_player_b'
            when player_a = player_b then 'self_match'
            when score_a is null then 'missing_or_invalid_score'
            when isnan(score_a) or score_a < 0 or score_a > 1 then 'score_out_of_range'
            when played_at is null then 'missing_or_invalid_played_at'
            when weight_given and (weight is null or isnan(weight) or isinf(weight) or weight <= 0) then 'invalid_weight'
            when period_given and (period is null or period_number is distinct from period::double) then 'invalid_period'
        end as row_reason
    from mapped
), repeated_ids as (
    {#- Duplicates and conflicts need a match_id seen on more than one row: rare, so only those rows are sorted -#}
    select match_id from flagged where match_id is not null group by match_id having count(*) > 1
), repeated as (
    select
        source_row,
        lag(content) over by_content is not distinct from content as is_copy,
        first_value(content) over (by_content rows between unbounded preceding and unbounded following)
            is distinct from last_value(content) over (by_content rows between unbounded preceding and unbounded following) as is_conflicting
    from (
        select source_row, match_id, row(played_at, player_a, player_b, score_a, league, weight, period) as content
        from flagged semi join repeated_ids using (match_id)
    )
    window by_content as (partition by match_id order by content, source_row)
)
select
    flagged.source_row,
    flagged.raw_row,
    coalesce(
        flagged.row_reason,
        case
            when repeated.is_conflicting then 'conflicting_match_id'
            when repeated.is_copy then 'duplicate_row'
        end
    ) as reason,
    flagged.match_id, flagged.played_at, flagged.player_a, flagged.player_b, flagged.score_a,
    flagged.league, flagged.weight, flagged.period
from flagged
left join repeated on repeated.source_row = flagged.source_row
{%- endmacro %}
