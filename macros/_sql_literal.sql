{#- A Jinja value as a SQL literal: none -> NULL, strings quoted, numbers and booleans as they are. -#}
{% macro _sql_literal(value) -%}
  {%- if value is none -%}NULL
  {%- elif value is string -%}'{{ value | replace("'", "''") }}'
  {%- elif value is sameas true or value is sameas false -%}{{ 'true' if value else 'false' }}
  {%- else -%}{{ value }}
  {%- endif -%}
{%- endmacro %}
