{#- What joins the parts of a mart over several replays: valid SQL (a union) when the whole is run at once,
    and the place where the duckrate_mart materialization splits it. -#}
{% macro _mart_part_separator() -%}
{{ '\nunion all by name -- duckrate: next part\n' }}
{%- endmacro %}
