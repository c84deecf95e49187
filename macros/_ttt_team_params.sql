{#- ttt_team_ratings' parameters: var('duckrate_ttt_params'), with p_draw the share of the relation's matches in
  which two teams share a place (equal rank, or equal score where ranks are NULL) when it names none. -#}
{% macro _ttt_team_params(relation) -%}
  {%- set given = dict(var('duckrate_ttt_params', {})) -%}
  {%- if 'p_draw' not in given and execute -%}
    {%- set share = run_query(
        'select coalesce(avg((teams > places)::int), 0) from (select match_id, count(distinct team) as teams, '
        ~ 'count(distinct coalesce(rank::double, -score::double)) as places from ' ~ relation ~ ' group by match_id)'
      ).columns[0].values()[0] -%}
    {%- do given.update({'p_draw': [share | float, 0.99] | min}) -%}
  {%- endif -%}
  {{ return(given) }}
{%- endmacro %}
