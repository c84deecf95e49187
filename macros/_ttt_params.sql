{#- The TrueSkill Through Time models' parameters: var('duckrate_ttt_params'), with p_draw, when it names none, the
  relation's share of drawn matches (at most 0.99): TrueSkill Through Time's p_draw defaults to 0, under which a draw
  is impossible. A draw is score_a 0.5 in matches; in team results (teams=true) two teams of a match in one place
  (equal rank, or equal score where ranks are NULL). -#}
{% macro _ttt_params(relation, teams=false) -%}
  {%- set given = dict(var('duckrate_ttt_params', {})) -%}
  {%- if 'p_draw' not in given and execute -%}
    {%- if teams -%}
      {%- set draws = '(select (count(distinct team) > count(distinct coalesce(rank::double, -score::double)))::int as drawn '
                      ~ 'from ' ~ relation ~ ' group by match_id)' -%}
    {%- else -%}
      {%- set draws = '(select (score_a = 0.5)::int as drawn from ' ~ relation ~ ')' -%}
    {%- endif -%}
    {%- set share = run_query('select coalesce(avg(drawn), 0) from ' ~ draws).columns[0].values()[0] -%}
    {%- do given.update({'p_draw': [share | float, 0.99] | min}) -%}
  {%- endif -%}
  {{ return(given) }}
{%- endmacro %}
