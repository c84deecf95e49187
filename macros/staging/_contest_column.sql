{#- The SQL expression for a canonical contest_results column: var('duckrate_contest_columns')[name], else
    the raw column of that name; optional columns without a raw column of that name are NULL. -#}
{% macro _contest_column(name, raw_columns) -%}
  {%- set mapping = var('duckrate_contest_columns', {}) -%}
  {%- if name in mapping and mapping[name] is not none -%}({{ mapping[name] }})
  {%- elif name | lower in raw_columns or not execute -%}"{{ name }}"
  {%- elif name in ['league', 'weight'] -%}NULL
  {%- else -%}
    {{ exceptions.raise_compiler_error("duckrate: the raw contest results have no column '" ~ name ~ "'; map it in var('duckrate_contest_columns')") }}
  {%- endif -%}
{%- endmacro %}
