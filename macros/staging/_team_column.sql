{#- The SQL expression for a canonical team_results column: var('duckrate_team_columns')[name], else the raw
    column of that name; optional columns (league, weight, and each of rank and score, of which the table
    needs one) without a raw column of that name are NULL. -#}
{% macro _team_column(name, raw_columns) -%}
  {%- set mapping = var('duckrate_team_columns', {}) -%}
  {%- if name in mapping and mapping[name] is not none -%}({{ mapping[name] }})
  {%- elif name | lower in raw_columns or not execute -%}"{{ name }}"
  {%- elif name in ['league', 'weight', 'rank', 'score'] -%}NULL
  {%- else -%}
    {{ exceptions.raise_compiler_error("duckrate: the raw team results have no column '" ~ name ~ "'; map it in var('duckrate_team_columns')") }}
  {%- endif -%}
{%- endmacro %}
