{#- The data type of a relation's column (None while dbt parses, or when the column is missing). -#}
{% macro _column_type(relation, name) -%}
  {%- if execute -%}
    {%- for column in adapter.get_columns_in_relation(relation) if column.name | lower == name | lower -%}
      {{ return(column.dtype) }}
    {%- endfor -%}
  {%- endif -%}
  {{ return(none) }}
{%- endmacro %}
