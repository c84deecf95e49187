{#- A relation as the quoted string duckrate's table macros take (they read it with query_table). -#}
{% macro _relation_literal(relation) -%}
  '{{ relation | string | replace("'", "''") }}'
{%- endmacro %}
