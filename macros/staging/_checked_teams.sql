{#-
  Every raw team results row (one per player per match) mapped onto the canonical columns, with `reason`
  saying why it cannot be replayed (NULL for a good row). A match is one (league, match_id). First failing
  wins:
    the row's own: missing_match_id, missing_team (NULL or blank), missing_player (NULL or blank after
    trimming), missing_or_invalid_played_at, missing_or_invalid_rank (given but not a whole number >= 1),
    invalid_score (given but not a finite number), missing_rank_and_score (neither given), invalid_weight
    (given but not in (0, 1]);
    duplicate_row: an exact copy of an earlier row (one copy is kept);
    then, over the rows left, reasons that reject the whole match (every row of it, so that the replays never
    see part of a match): player_twice_in_match (a player in two teams, or twice with different values),
    conflicting_played_at, conflicting_team_rank (a team's rows disagree on its rank or its score, NULL
    included), mixed_rank_and_score (a rank given on some of the match's rows but not all, or a score),
    rank_score_disagree (ranks and scores both given and ordering the teams differently), single_team_match
    (one team left).
  `source_row` numbers the raw rows deterministically (by the raw values); `raw_row` keeps the raw row.
-#}
{% macro _checked_teams(raw) -%}
  {%- set raw_relation_columns = adapter.get_columns_in_relation(raw) -%}
  {%- set raw_names = raw_relation_columns | map(attribute='name') | list -%}
  {%- set raw_columns = raw_names | map('lower') | list -%}
  {%- set mapping = var('duckrate_team_columns', {}) -%}
  {%- if execute and not (mapping.get('rank') or mapping.get('score') or 'rank' in raw_columns or 'score' in raw_columns) -%}
    {{ exceptions.raise_compiler_error("duckrate: the raw team results have neither a 'rank' nor a 'score' column; map one in var('duckrate_team_columns')") }}
  {%- endif -%}
  {%- set played_at = duckrate._team_column('played_at', raw_columns) -%}
  {%- set played_at_source = (mapping.get('played_at') or 'played_at') | lower -%}
  {%- set text_columns = raw_relation_columns | selectattr('dtype', 'in', ['VARCHAR', 'TEXT', 'STRING']) | map(attribute='name') | map('lower') | list -%}
  {%- set rank = duckrate._team_column('rank', raw_columns) -%}
  {%- set score = duckrate._team_column('score', raw_columns) -%}
  {%- set weight = duckrate._team_column('weight', raw_columns) -%}
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
        {{ duckrate._team_column('match_id', raw_columns) }} as match_id,
        {#- played_at keeps its type (TIMESTAMP, DATE or integer order); a text column is parsed as a timestamp -#}
        {% if played_at_source in text_columns %}try_cast({{ played_at }} as timestamp){% else %}{{ played_at }}{% endif %} as played_at,
        {#- the team keeps its type (any key unique within the match) -#}
        {{ duckrate._team_column('team', raw_columns) }} as team,
        nullif(trim(cast({{ duckrate._team_column('player', raw_columns) }} as varchar)), '') as player,
        try_cast({{ rank }} as bigint) as rank,
        {#- a fractional rank (1.5) would round silently in the cast above: compare with the number given -#}
        try_cast({{ rank }} as double) as rank_number,
        try_cast({{ score }} as double) as score,
        cast({{ duckrate._team_column('league', raw_columns) }} as varchar) as league,
        try_cast({{ weight }} as double) as weight,
        {{ rank }} is not null as rank_given,
        {{ score }} is not null as score_given,
        {{ weight }} is not null as weight_given
    from raw
), flagged as (
    select
        *,
        case
            when match_id is null then 'missing_match_id'
            when team is null or trim(cast(team as varchar)) = '' then 'missing_team'
            when player is null then 'missing_player'
            when played_at is null then 'missing_or_invalid_played_at'
            {#- the replays take ranks below 2^62 -#}
            when rank_given and (rank is null or rank_number is distinct from rank::double or rank < 1
                                 or rank >= 4611686018427387904) then 'missing_or_invalid_rank'
            when score_given and (score is null or isnan(score) or isinf(score)) then 'invalid_score'
            when not rank_given and not score_given then 'missing_rank_and_score'
            when weight_given and (weight is null or isnan(weight) or weight <= 0 or weight > 1) then 'invalid_weight'
        end as row_reason
    from mapped
), copies as (
    select
        source_row,
        row_number() over (partition by league, match_id, team, player, played_at, rank, score, weight order by source_row) as copy_number
    from flagged
    where row_reason is null
), kept as (
    {#- the rows left after the row checks and the copies: the whole-match checks look at them -#}
    select
        flagged.source_row,
        count(*) over (partition by league, match_id, player) as player_rows,
        count(distinct played_at) over by_match as played_at_values,
        count(distinct rank) over by_team as team_ranks,
        count(distinct score) over by_team as team_scores,
        count(rank) over by_team as team_rank_rows,
        count(score) over by_team as team_score_rows,
        count(*) over by_team as team_rows,
        count(rank) over by_match as match_rank_rows,
        count(score) over by_match as match_score_rows,
        count(*) over by_match as match_rows,
        count(distinct team) over by_match as n_teams,
        {#- each team's place by its rank and by its score (higher first): the same when they agree -#}
        dense_rank() over (partition by league, match_id order by rank) as place_by_rank,
        dense_rank() over (partition by league, match_id order by score desc) as place_by_score,
        league, match_id
    from flagged
    join copies on copies.source_row = flagged.source_row
    where copies.copy_number = 1
    window by_match as (partition by league, match_id), by_team as (partition by league, match_id, team)
), match_checks as (
    select
        source_row,
        max(player_rows) over by_match > 1 as player_twice,
        played_at_values > 1 as conflicting_played_at,
        bool_or(team_ranks > 1 or team_scores > 1 or team_rank_rows not in (0, team_rows)
                or team_score_rows not in (0, team_rows)) over by_match as conflicting_team,
        match_rank_rows not in (0, match_rows) or match_score_rows not in (0, match_rows) as mixed,
        match_rank_rows = match_rows and match_score_rows = match_rows
            and bool_or(place_by_rank <> place_by_score) over by_match as disagree,
        n_teams < 2 as single_team
    from kept
    window by_match as (partition by league, match_id)
), match_reasons as (
    select
        source_row,
        case
            when player_twice then 'player_twice_in_match'
            when conflicting_played_at then 'conflicting_played_at'
            when conflicting_team then 'conflicting_team_rank'
            when mixed then 'mixed_rank_and_score'
            when disagree then 'rank_score_disagree'
            when single_team then 'single_team_match'
        end as match_reason
    from match_checks
)
select
    flagged.source_row,
    flagged.raw_row,
    coalesce(
        flagged.row_reason,
        case when copies.copy_number > 1 then 'duplicate_row' end,
        match_reasons.match_reason
    ) as reason,
    flagged.match_id, flagged.played_at, flagged.team, flagged.player, flagged.rank, flagged.score,
    flagged.league, flagged.weight
from flagged
left join copies on copies.source_row = flagged.source_row
left join match_reasons on match_reasons.source_row = flagged.source_row
{%- endmacro %}
