{#- ttt_ratings' parameters: var('duckrate_ttt_params'), with p_draw the relation's share of draws (score_a
  0.5) when it names none: TrueSkill Through Time's p_draw defaults to 0, under which a draw is impossible. -#}
{% macro _ttt_params(relation) -%}
  {%- set given = dict(var('duckrate_ttt_params', {})) -%}
  {%- if 'p_draw' not in given and execute -%}
    {%- set share = run_query('select coalesce(avg((score_a = 0.5)::int), 0) from ' ~ relation).columns[0].values()[0] -%}
    {%- do given.update({'p_draw': [share | float, 0.99] | min}) -%}
  {%- endif -%}
  {{ return(given) }}
{%- endmacro %}
