{#- The SQL expression for a canonical matches column: var('duckrate_match_columns')[name], else the raw
    column of that name; optional columns without a raw column of that name are NULL. -#}
{% macro _match_column(name, raw_columns) -%}
  {%- set mapping = var('duckrate_match_columns', {}) -%}
  {%- if name in mapping and mapping[name] is not none -%}({{ mapping[name] }})
  {%- elif name | lower in raw_columns or not execute -%}"{{ name }}"
  {%- elif name in ['league', 'weight', 'period'] -%}NULL
  {%- else -%}
    {{ exceptions.raise_compiler_error("duckrate: the raw matches have no column '" ~ name ~ "'; map it in var('duckrate_match_columns')") }}
  {%- endif -%}
{%- endmacro %}
