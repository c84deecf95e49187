{#- A TIMESTAMP of an expression of type data_type: a TIMESTAMPTZ as its UTC time (the whole-history fits'
  periods start in UTC), a DATE at midnight, a TIMESTAMP as it is. -#}
{% macro _utc_timestamp(expression, data_type) -%}
  {%- if data_type is not none and 'TIME ZONE' in data_type | upper -%}
    timezone('UTC', {{ expression }})
  {%- else -%}
    {{ expression }}::timestamp
  {%- endif -%}
{%- endmacro %}
