{#- A Jinja value as a SQL literal: none -> NULL, strings quoted, numbers and booleans as they are, a
    relation (e.g. ref('my_priors')) as the quoted name the table macros read with query_table, a
    mapping as a DuckDB MAP (an empty one as NULL), a list as a DuckDB list (an empty one as NULL). -#}
{% macro _sql_literal(value) -%}
  {%- if value is none -%}NULL
  {%- elif value is string -%}'{{ value | replace("'", "''") }}'
  {%- elif value.render is defined -%}{{ duckrate._relation_literal(value) }}
  {%- elif value is mapping -%}
    {%- if value | length == 0 -%}NULL
    {%- else -%}MAP {
      {%- for key, item in value.items() %}{{ duckrate._sql_literal(key) }}: {{ duckrate._sql_literal(item) }}{% if not loop.last %}, {% endif %}{% endfor -%}
    }{%- endif -%}
  {%- elif value is sequence -%}
    {%- if value | length == 0 -%}NULL
    {%- else -%}[{%- for item in value %}{{ duckrate._sql_literal(item) }}{% if not loop.last %}, {% endif %}{% endfor -%}]
    {%- endif -%}
  {%- elif value is sameas true or value is sameas false -%}{{ 'true' if value else 'false' }}
  {%- else -%}{{ value }}
  {%- endif -%}
{%- endmacro %}
