{#- A whole-history fit's parameters: the given ones, else the fit's var; with var('duckrate_history_period')
  as the period when they name none (the period rating_history uses for the replays too). -#}
{% macro _history_params(params, var_name) -%}
  {%- set given = dict(params if params is not none else var(var_name, {})) -%}
  {%- if 'period' not in given and var('duckrate_history_period', none) is not none -%}
    {%- do given.update({'period': var('duckrate_history_period')}) -%}
  {%- endif -%}
  {{ return(given) }}
{%- endmacro %}
